package cluster

import "errors"

// Cluster is what a running node holds: the Directory and Bus the rest of
// svc sees, plus what only membership itself can do. *Local (clustering
// off) and *Gossip (clustering on) implement it.
type Cluster interface {
	Directory
	Bus
	// SendTo delivers one message to the subscribers of topic on node id
	// only (the scheduler hands a fire to one node this way).
	SendTo(id, topic string, payload []byte) error
	// SetTags replaces the compute-member tags, per tenant, this node
	// advertises; the compute package calls it whenever a member joins or
	// leaves.
	SetTags(tags map[string][]string)
	// Report tells /readyz whether membership is healthy, and one line on
	// it.
	Report() (ok bool, detail string)
	// Close leaves the cluster and stops delivery.
	Close()
}

// ErrUnknownNode is SendTo's answer for a node that is not live.
var ErrUnknownNode = errors.New("cluster: no such live node")

// Topics of the notifications svc itself sends.
const (
	// TopicModelInvalidate carries a model change: every node drops its
	// cached copy of the model.
	TopicModelInvalidate = "model.invalidate"
	// TopicAuthChanged carries a change to OIDC providers, trusted keys,
	// keypairs, clients or revocations: every node re-reads that part of
	// its verification cache.
	TopicAuthChanged = "auth.changed"
	// TopicSchedulerFire hands a claimed scheduled task to the node that
	// fires it.
	TopicSchedulerFire = "scheduler.fire"
)

var (
	_ Cluster = (*Local)(nil)
	_ Cluster = (*Gossip)(nil)
)
