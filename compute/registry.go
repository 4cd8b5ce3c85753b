package compute

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// memberConn is one joined compute member: one startStreaming call.
type memberConn struct {
	id     string
	tenant string
	tags   []string
	// lastSeen is the unix-nano time of the member's last message.
	lastSeen atomic.Int64
	// sendingSince is when the in-flight Send began, 0 when idle; a Send
	// stuck longer than the keep-alive timeout evicts the member.
	sendingSince atomic.Int64
	out          chan outbound
	// done is closed when the stream ends; pending calls then fail as
	// disconnected.
	done chan struct{}

	mu      sync.Mutex
	pending map[string]chan reply
}

// outbound is an event for the member's sender goroutine; requestID names
// the pending call a failed send should fail.
type outbound struct {
	ev        *ce.CloudEvent
	requestID string
}

// reply completes a pending call: a response, or the send error.
type reply struct {
	resp *wire.Response
	err  error
}

func newMember(id, tenant string, tags []string) *memberConn {
	m := &memberConn{id: id, tenant: tenant, tags: tags, out: make(chan outbound, 64),
		done: make(chan struct{}), pending: map[string]chan reply{}}
	m.touch()
	return m
}

func (m *memberConn) touch() { m.lastSeen.Store(time.Now().UnixNano()) }

// serves reports whether the member declared at least one of tags; no
// required tags means any member.
func (m *memberConn) serves(tags []string) bool {
	if len(tags) == 0 {
		return true
	}
	for _, want := range tags {
		for _, have := range m.tags {
			if want == have {
				return true
			}
		}
	}
	return false
}

func (m *memberConn) await(requestID string) chan reply {
	ch := make(chan reply, 1)
	m.mu.Lock()
	m.pending[requestID] = ch
	m.mu.Unlock()
	return ch
}

func (m *memberConn) forget(requestID string) {
	m.mu.Lock()
	delete(m.pending, requestID)
	m.mu.Unlock()
}

// complete hands r to the call waiting on requestID; a response for an
// unknown or expired request is dropped.
func (m *memberConn) complete(requestID string, r reply) bool {
	m.mu.Lock()
	ch := m.pending[requestID]
	delete(m.pending, requestID)
	m.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- r
	return true
}

// registry holds the joined members of every tenant.
type registry struct {
	mu       sync.RWMutex
	byTenant map[string]map[string]*memberConn
	// joined is closed and replaced on every join, waking dispatches that
	// wait for a member with their tags.
	joined chan struct{}
}

func newRegistry() *registry {
	return &registry{byTenant: map[string]map[string]*memberConn{}, joined: make(chan struct{})}
}

func (r *registry) add(m *memberConn) {
	r.mu.Lock()
	ms := r.byTenant[m.tenant]
	if ms == nil {
		ms = map[string]*memberConn{}
		r.byTenant[m.tenant] = ms
	}
	ms[m.id] = m
	close(r.joined)
	r.joined = make(chan struct{})
	r.mu.Unlock()
}

func (r *registry) remove(m *memberConn) {
	r.mu.Lock()
	if ms := r.byTenant[m.tenant]; ms != nil {
		delete(ms, m.id)
		if len(ms) == 0 {
			delete(r.byTenant, m.tenant)
		}
	}
	r.mu.Unlock()
}

// joinSignal is closed at the next join.
func (r *registry) joinSignal() <-chan struct{} {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.joined
}

// pick returns a random member of tenant serving one of tags, or nil.
func (r *registry) pick(tenant string, tags []string) *memberConn {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var chosen *memberConn
	n := 0
	for _, m := range r.byTenant[tenant] {
		if m.serves(tags) {
			n++
			if rand.IntN(n) == 0 { // reservoir sampling: uniform pick
				chosen = m
			}
		}
	}
	return chosen
}

// count is the number of joined members of tenant.
func (r *registry) count(tenant string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byTenant[tenant])
}
