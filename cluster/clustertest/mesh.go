// Package clustertest has an in-process stand-in for membership: a Mesh
// of nodes whose views are cluster.Directory values, for tests that run
// several real nodes (HTTP, gRPC, storage) in one process without gossip.
package clustertest

import (
	"slices"
	"sort"
	"sync"

	"svc/cluster"
)

// Mesh is the shared truth every node's view reads: which nodes are live
// and what they advertise. Safe for concurrent use.
type Mesh struct {
	mu    sync.RWMutex
	nodes map[string]cluster.Node
}

// NewMesh returns an empty mesh.
func NewMesh() *Mesh { return &Mesh{nodes: map[string]cluster.Node{}} }

// Put adds or replaces node n (its tags included).
func (m *Mesh) Put(n cluster.Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[n.ID] = clone(n)
}

// SetAddrs sets a node's addresses, keeping its tags; the node is live
// from then on.
func (m *Mesh) SetAddrs(id, httpAddr, grpcAddr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[id]
	n.ID, n.HTTPAddr, n.GRPCAddr = id, httpAddr, grpcAddr
	m.nodes[id] = n
}

// SetTags records tenant's member tags on node id, as membership metadata
// does; nil tags remove the tenant (compute.Server.OnTagsChanged's shape).
func (m *Mesh) SetTags(id, tenant string, tags []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[id]
	n.ID = id
	if tags == nil {
		delete(n.Tags, tenant)
	} else {
		if n.Tags == nil {
			n.Tags = map[string][]string{}
		}
		n.Tags[tenant] = slices.Clone(tags)
	}
	m.nodes[id] = n
}

// Remove makes node id not live.
func (m *Mesh) Remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.nodes, id)
}

// View is node id's Directory.
func (m *Mesh) View(id string) cluster.Directory { return view{m: m, id: id} }

type view struct {
	m  *Mesh
	id string
}

func (v view) Self() cluster.Node {
	if n, ok := v.Lookup(v.id); ok {
		return n
	}
	return cluster.Node{ID: v.id}
}

func (v view) Live() []cluster.Node {
	v.m.mu.RLock()
	out := make([]cluster.Node, 0, len(v.m.nodes))
	for _, n := range v.m.nodes {
		out = append(out, clone(n))
	}
	v.m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (v view) Lookup(id string) (cluster.Node, bool) {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	n, ok := v.m.nodes[id]
	return clone(n), ok
}

func clone(n cluster.Node) cluster.Node {
	if n.Tags != nil {
		t := make(map[string][]string, len(n.Tags))
		for k, v := range n.Tags {
			t[k] = slices.Clone(v)
		}
		n.Tags = t
	}
	return n
}
