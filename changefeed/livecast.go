package changefeed

import (
	"fmt"
	"maps"
	"time"

	json "github.com/goccy/go-json"
)

// Live streams across the cluster. A live-only stream is stored nowhere,
// so the store cannot tell other nodes to record its model. Instead each
// node announces the (tenant, model, version) keys of its live streams on
// the cluster bus (cmd/svc): when a key is first attached or last
// detached here, and again every refresh while any is, so a node that
// joins learns them within one refresh (sooner: it says hello and every
// node with keys answers). Each announcement carries a lease; a receiver
// keeps the sender's keys in its watched set until the lease lapses
// unless a newer announcement renews it, so a node that dies leaves its
// keys watched for one lease at most. An empty announcement (the last
// live stream here ended) drops the sender's keys at once.

// LiveKey is one model a node's live streams watch.
type LiveKey struct {
	Tenant  string `json:"tenant"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// LiveAnnouncement is what a node announces of its live streams.
type LiveAnnouncement struct {
	// Node is the sender's node id.
	Node string `json:"node"`
	// Seq orders one sender's announcements (the bus may reorder them);
	// it grows across restarts (nanoseconds of the sender's clock, kept
	// increasing).
	Seq int64 `json:"seq"`
	// LeaseMs is how long a receiver keeps Keys without a newer
	// announcement.
	LeaseMs int64     `json:"leaseMs"`
	Keys    []LiveKey `json:"keys,omitempty"`
	// Hello asks every receiver with live streams to announce now (a node
	// that just started knows nobody's keys).
	Hello bool `json:"hello,omitempty"`
}

// remoteLive is one other node's announced keys.
type remoteLive struct {
	seq     int64
	keys    []watchKey
	expires time.Time
}

// LiveAnnouncement encodes this node's live keys as node, with lease.
func (s *Service) LiveAnnouncement(node string, lease time.Duration, hello bool) []byte {
	s.mu.Lock()
	seq := max(s.opt.Now().UnixNano(), s.seq+1)
	s.seq = seq
	a := LiveAnnouncement{Node: node, Seq: seq, LeaseMs: lease.Milliseconds(), Hello: hello, Keys: make([]LiveKey, 0, len(s.live))}
	for k := range s.live {
		a.Keys = append(a.Keys, LiveKey{k.tenant, k.name, k.version})
	}
	s.mu.Unlock()
	b, _ := json.Marshal(&a)
	return b
}

// HasLive reports whether a live stream is attached here.
func (s *Service) HasLive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live) > 0
}

// ApplyLive takes another node's announcement (payload) into the watched
// set; self's own (the bus delivers to the sender too) and one older than
// the last taken from its sender are ignored. hello is the sender's
// request that this node announce its own keys now.
func (s *Service) ApplyLive(self string, payload []byte) (hello bool, err error) {
	var a LiveAnnouncement
	if err := json.Unmarshal(payload, &a); err != nil {
		return false, fmt.Errorf("changefeed: live announcement: %w", err)
	}
	if a.Node == "" || a.Node == self {
		return false, nil
	}
	now := s.opt.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.remote[a.Node]; ok && a.Seq <= r.seq {
		return a.Hello, nil
	}
	if a.LeaseMs <= 0 {
		if _, ok := s.remote[a.Node]; ok {
			delete(s.remote, a.Node)
			s.install()
		}
		return a.Hello, nil
	}
	keys := make([]watchKey, len(a.Keys))
	for i, k := range a.Keys {
		keys[i] = watchKey{k.Tenant, k.Name, k.Version}
	}
	// With no keys the entry stays for its lease, holding seq, so a late
	// copy of an older announcement does not bring the keys back.
	old := s.remote[a.Node]
	s.remote[a.Node] = remoteLive{seq: a.Seq, keys: keys, expires: now.Add(time.Duration(a.LeaseMs) * time.Millisecond)}
	if !sameKeys(old.keys, keys) {
		s.install()
	}
	return a.Hello, nil
}

// ExpireLive drops the keys of every node whose lease lapsed (a node that
// died or lost its way to this one); cmd/svc calls it periodically.
func (s *Service) ExpireLive() {
	now := s.opt.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := false
	maps.DeleteFunc(s.remote, func(_ string, r remoteLive) bool {
		if now.Before(r.expires) {
			return false
		}
		dropped = dropped || len(r.keys) > 0
		return true
	})
	if dropped {
		s.install()
	}
}

// install rebuilds the watched set from stored subscriptions, the live
// streams here and the other nodes' announced ones; s.mu is held.
func (s *Service) install() {
	live := s.live
	if len(s.remote) > 0 {
		live = maps.Clone(s.live)
		for _, r := range s.remote {
			for _, k := range r.keys {
				live[k]++
			}
		}
	}
	s.watched.replace(s.stored, live)
}

func sameKeys(a, b []watchKey) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[watchKey]struct{}, len(a))
	for _, k := range a {
		set[k] = struct{}{}
	}
	for _, k := range b {
		if _, ok := set[k]; !ok {
			return false
		}
	}
	return true
}
