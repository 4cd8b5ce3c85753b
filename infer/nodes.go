package infer

import "slices"

// Node is one SIMPLE_VIEW node of a model, as the shared node walk sees it:
// the root "$", an element node "P.f[*]" of an array of objects, or the
// detached node of an array of arrays ("P.f[*]", "P.f[*][*]", …); a mixed
// node has both an object part and a detached part.
type Node struct {
	Path string
	// Object reports an object part; Fields are its data keys (no
	// structural keys), sorted byte-wise as in the export.
	Object bool
	Fields []NodeField
	// Detached is the detached array part (array and mixed nodes): the
	// primitive positions of the arrays whose elements this node describes.
	Detached *ArrayInfo
}

// NodeField is a data key of an object node.
type NodeField struct {
	Key string // ".a.b", or ".tags[*]" for an array
	// Types is the scalar TypeSet (Array == nil).
	Types TypeSet
	// Array holds the primitive positions of a "[*]" key. OfArrays marks a
	// key whose elements are arrays (exported as (ARRAY_ELEMENT x n)); its
	// Array then holds any level-1 primitives next to those arrays.
	Array    *ArrayInfo
	OfArrays bool
}

// ArrayInfo is the primitive part of an array slot: its widest observed
// length and the TypeSet seen at each position (empty where only
// containers were seen).
type ArrayInfo struct {
	Width     int
	Positions []TypeSet
	// Containers reports elements that were objects or arrays. The export
	// then prints (ARRAY_ELEMENT x n) for the array, so its primitive
	// positions do not survive a stored model.
	Containers bool
}

// Nodes lists the model's SIMPLE_VIEW nodes sorted by path, built by the
// same walk as the export.
func (m *Model) Nodes() []Node {
	c := &nodeCollector{}
	c.walk.v = c
	c.walk.run(m)
	slices.SortFunc(c.nodes, func(a, b Node) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	for i := range c.nodes {
		slices.SortFunc(c.nodes[i].Fields, func(a, b NodeField) int {
			switch {
			case a.Key < b.Key:
				return -1
			case a.Key > b.Key:
				return 1
			}
			return 0
		})
	}
	return c.nodes
}

type nodeCollector struct {
	walk  nodeWalk
	nodes []Node
}

func arrayInfo(a *arrayShape) *ArrayInfo {
	return &ArrayInfo{Width: a.width, Positions: slices.Clone(a.pos), Containers: a.structured()}
}

func (c *nodeCollector) node(path []byte, kind uint8, arr *arrayShape) int32 {
	n := Node{Path: string(path), Object: kind != nodeArray}
	if kind != nodeObject {
		n.Detached = arrayInfo(arr)
	}
	c.nodes = append(c.nodes, n)
	return int32(len(c.nodes) - 1)
}

func (c *nodeCollector) scalar(node int32, key []byte, t TypeSet) {
	c.nodes[node].Fields = append(c.nodes[node].Fields, NodeField{Key: string(key), Types: t})
}

func (c *nodeCollector) primArray(node int32, key []byte, a *arrayShape) {
	c.nodes[node].Fields = append(c.nodes[node].Fields, NodeField{Key: string(key), Array: arrayInfo(a)})
}

func (c *nodeCollector) arrayOfArrays(node int32, key []byte, a *arrayShape) {
	c.nodes[node].Fields = append(c.nodes[node].Fields, NodeField{Key: string(key), Array: arrayInfo(a), OfArrays: true})
}

func (c *nodeCollector) structural(int32, []byte) {}
func (c *nodeCollector) elementMarker(int32)      {}
