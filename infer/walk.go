package infer

// The node walk is the one place that decides which SIMPLE_VIEW nodes a
// model has and which keys each node carries. The SIMPLE_VIEW encoder and
// the SQL table generator (sqlschema) both consume it, so an export and the
// tables generated from it can never disagree.

// nodeVisitor receives the walk. Paths and keys are only valid during the
// call (they live in the walk's buffers).
type nodeVisitor interface {
	// node opens a node at path: an object node (arr nil), an array node
	// (the detached array arr) or a mixed node (both). It returns the
	// visitor's handle for the node's entries.
	node(path []byte, kind uint8, arr *arrayShape) int32
	// scalar is a data key with a scalar facet.
	scalar(node int32, key []byte, t TypeSet)
	// primArray is a data key "….f[*]" for an array's primitive positions.
	primArray(node int32, key []byte, a *arrayShape)
	// arrayOfArrays is a data key "….f[*]" for an array whose elements are
	// arrays (a.elemArr != nil); a may still hold level-1 primitives.
	arrayOfArrays(node int32, key []byte, a *arrayShape)
	// structural is the key "#"+field of a field with its own child node.
	structural(node int32, field []byte)
	// elementMarker is the "#": "ARRAY_ELEMENT" entry of an element object.
	elementMarker(node int32)
}

type nodeWalk struct {
	v    nodeVisitor
	key  []byte // the dotted key being built
	path []byte // the node path being built
}

func (w *nodeWalk) run(m *Model) {
	w.key, w.path = w.key[:0], append(w.path[:0], '$')
	root := w.v.node(w.path, nodeObject, nil)
	w.object(root, &m.root)
}

// object adds the fields of o to node, their keys prefixed by w.key.
func (w *nodeWalk) object(node int32, o *objectShape) {
	for _, s := range o.order {
		keyLen := len(w.key)
		w.key = append(w.key, '.')
		w.key = append(w.key, s.name...)
		if s.scalar != 0 && !(s.scalar == nullBit && (s.obj != nil || s.arr != nil)) {
			w.v.scalar(node, w.key, s.scalar)
		}
		if s.obj != nil {
			w.object(node, s.obj)
		}
		if a := s.arr; a != nil {
			k := len(w.key)
			w.key = append(w.key, "[*]"...)
			switch {
			case !a.structured():
				w.v.primArray(node, w.key, a)
			case a.elemArr != nil:
				w.v.arrayOfArrays(node, w.key, a)
			case a.hasConcrete(): // null elements next to containers are absorbed
				w.v.primArray(node, w.key, a)
			}
			if a.structured() {
				w.v.structural(node, w.key[:k])
				pathLen := len(w.path)
				w.path = append(w.path, w.key...)
				saved := w.key
				w.key = w.key[len(w.key):] // element nodes start a fresh key
				w.element(a)
				w.key = saved
				w.path = w.path[:pathLen]
			}
			w.key = w.key[:k]
		}
		w.key = w.key[:keyLen]
	}
}

// element visits the node at w.path describing the elements of a.
func (w *nodeWalk) element(a *arrayShape) {
	switch {
	case a.elemObj != nil && a.elemArr != nil:
		n := w.v.node(w.path, nodeMixed, a.elemArr)
		w.object(n, a.elemObj)
		w.v.elementMarker(n)
	case a.elemObj != nil:
		n := w.v.node(w.path, nodeObject, nil)
		w.object(n, a.elemObj)
		w.v.elementMarker(n)
	default:
		w.v.node(w.path, nodeArray, a.elemArr)
	}
	if inner := a.elemArr; inner != nil && inner.structured() {
		pathLen := len(w.path)
		w.path = append(w.path, "[*]"...)
		w.element(inner)
		w.path = w.path[:pathLen]
	}
}
