// Package cluster lets several svc nodes on one PostgreSQL database serve
// as one: membership, cluster-wide notifications, and the view of live
// peers that compute dispatch, transaction routing and the scheduler use.
package cluster

// Node is what one svc node tells the others about itself.
type Node struct {
	ID       string `json:"id"`
	HTTPAddr string `json:"httpAddr"`
	GRPCAddr string `json:"grpcAddr"`
	// Tags are the tags of the compute members connected to this node,
	// per tenant; dispatch looks for a peer whose tags match.
	Tags map[string][]string `json:"tags,omitempty"`
}

// Directory is the live view of the cluster. With clustering off it holds
// the one local node.
type Directory interface {
	Self() Node
	// Live returns the live nodes, self included, sorted by ID.
	Live() []Node
	Lookup(id string) (Node, bool)
}

// Bus carries cluster-wide notifications by topic. Delivery is best
// effort: every consumer keeps a safety net (a lease, a reconcile) for a
// lost message.
type Bus interface {
	Publish(topic string, payload []byte) error
	Subscribe(topic string, fn func(payload []byte)) (cancel func())
}
