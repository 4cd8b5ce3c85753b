package changefeed

import (
	"sync/atomic"

	"svc/storage"
)

// watchKey is a (tenant, model) some subscription watches.
type watchKey struct {
	tenant  string
	name    string
	version int
}

// watch is what the recorder must keep of a watched model's changes.
type watch struct {
	body, before bool
}

// Watched is the node's set of watched models: the recorder consults it
// on every commit, so a write to a model nobody watches costs one atomic
// load and, when anything is watched at all, one map lookup — no database
// work. It is rebuilt whole from the subscription store (Service.Sync) on
// this node's subscription changes, when another node announces one, and
// periodically as a backstop; and it holds the models of the live streams
// attached to any node of the cluster (stored nowhere: each node announces
// its own, livecast.go).
type Watched struct {
	m atomic.Pointer[map[watchKey]watch]
}

func (w *Watched) lookup(tenant string, m storage.ModelKey) (watch, bool) {
	p := w.m.Load()
	if p == nil || len(*p) == 0 {
		return watch{}, false
	}
	x, ok := (*p)[watchKey{tenant, m.Name, m.Version}]
	return x, ok
}

// empty reports that nothing is watched: the recorder's fast path.
func (w *Watched) empty() bool {
	p := w.m.Load()
	return p == nil || len(*p) == 0
}

// replace installs the set computed from stored subscriptions plus the
// live streams attached here or announced by other nodes.
func (w *Watched) replace(stored map[watchKey]watch, live map[watchKey]int) {
	m := make(map[watchKey]watch, len(stored)+len(live))
	for k, v := range stored {
		m[k] = v
	}
	for k, n := range live {
		if n > 0 {
			x := m[k]
			x.body = true // a live stream's filter and bodies are its own: keep the body after
			m[k] = x
		}
	}
	w.m.Store(&m)
}
