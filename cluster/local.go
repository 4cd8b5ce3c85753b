package cluster

import (
	"log/slog"
	"slices"
	"sync"
)

// Local is the cluster of one used when clustering is off: its Directory
// holds only this node and its Bus delivers to this node's subscribers, so
// the consumers of cluster-wide notifications behave the same either way.
type Local struct {
	mu   sync.RWMutex
	self Node
	subs *subscribers
}

// NewLocal returns the single-node cluster of self. Close stops delivery.
func NewLocal(self Node, log *slog.Logger) *Local {
	return &Local{self: self, subs: newSubscribers(log)}
}

func (l *Local) Self() Node {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return cloneNode(l.self)
}

func (l *Local) Live() []Node { return []Node{l.Self()} }

func (l *Local) Lookup(id string) (Node, bool) {
	n := l.Self()
	if id != n.ID {
		return Node{}, false
	}
	return n, true
}

// SetTags records the compute-member tags connected here, per tenant.
func (l *Local) SetTags(tags map[string][]string) {
	l.mu.Lock()
	l.self.Tags = cloneTags(tags)
	l.mu.Unlock()
}

// Publish delivers payload to this node's subscribers of topic.
func (l *Local) Publish(topic string, payload []byte) error {
	if _, err := frame(topic, payload); err != nil {
		return err
	}
	l.subs.deliver(topic, slices.Clone(payload))
	return nil
}

func (l *Local) Subscribe(topic string, fn func(payload []byte)) (cancel func()) {
	return l.subs.Subscribe(topic, fn)
}

// SendTo delivers to this node when id is its own; there is no other.
func (l *Local) SendTo(id, topic string, payload []byte) error {
	if id != l.Self().ID {
		return ErrUnknownNode
	}
	return l.Publish(topic, payload)
}

// Report describes membership for /readyz.
func (l *Local) Report() (bool, string) { return true, "membership: single node (clustering off)" }

// Close stops delivery.
func (l *Local) Close() { l.subs.close() }

func cloneNode(n Node) Node {
	n.Tags = cloneTags(n.Tags)
	return n
}

func cloneTags(t map[string][]string) map[string][]string {
	if t == nil {
		return nil
	}
	c := make(map[string][]string, len(t))
	for k, v := range t {
		c[k] = slices.Clone(v)
	}
	return c
}
