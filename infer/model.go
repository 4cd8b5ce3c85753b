package infer

import "bytes"

// Model is a cumulative inferred model. Every slot (an object member, or the
// elements of an array) keeps independent facets, because SIMPLE_VIEW can
// print a scalar, an inlined object and an array at one path side by side:
//
//   - scalar: the TypeSet of primitive values seen there;
//   - obj:    the merged shape of every object seen there;
//   - arr:    the merged shape of every array seen there.
//
// Merging is a facet-wise union (TypeSet union, max width, per-position
// union, recursive shape merge). Each of those is commutative, associative
// and idempotent, so the model depends only on the set of documents seen.
//
// Field names are split at '.' when they enter the model: SIMPLE_VIEW prints
// a literal member "a.b" and a nested a→b as the same key .a.b, so holding
// them as one slot is what keeps export → import → export byte-identical.
//
// Not safe for concurrent mutation; callers Clone before widening a shared
// model. Concurrent readers are safe while nobody mutates.
type Model struct {
	root objectShape
}

// objectShape is the merged shape of the objects seen at one place.
type objectShape struct {
	fields map[string]*slot
	// order lists fields by first appearance. Documents of one shape list
	// their members in the same order, so the walker tries order[i] before
	// hashing the key.
	order []*slot
}

type slot struct {
	name   string
	idx    int // position in the parent's order
	scalar TypeSet
	obj    *objectShape
	arr    *arrayShape
}

// arrayShape is the merged shape of the arrays seen at one place.
type arrayShape struct {
	width   int       // longest array seen
	pos     []TypeSet // primitive types per index; len(pos) == width
	elemObj *objectShape
	elemArr *arrayShape
}

// NewModel returns an empty model (it exports as {"$":{}}).
func NewModel() *Model { return &Model{} }

// Clone returns a deep copy that shares nothing with m.
func (m *Model) Clone() *Model {
	c := &Model{}
	c.root.mergeFrom(&m.root)
	return c
}

// Equal reports whether m and o export the same SIMPLE_VIEW, the form a model
// is stored in; facts the export cannot carry (a null seen on an object slot,
// the length of an array of objects) do not make models differ.
//
// Different fingerprints (a walk without the export's sort) prove different
// exports; only equal ones are encoded and compared.
func (m *Model) Equal(o *Model) bool {
	if m.fingerprint() != o.fingerprint() {
		return false
	}
	return bytes.Equal(m.AppendSimpleView(nil), o.AppendSimpleView(nil))
}

// Merge widens m with everything o has seen. o is not modified and shares
// nothing with m afterwards.
func (m *Model) Merge(o *Model) { m.root.mergeFrom(&o.root) }

func (o *objectShape) get(name []byte) *slot {
	if o.fields == nil {
		return nil
	}
	return o.fields[string(name)]
}

// child returns the named field, creating it on first sight.
func (o *objectShape) child(name []byte) *slot {
	if s := o.fields[string(name)]; s != nil {
		return s
	}
	return o.add(string(name))
}

func (o *objectShape) add(name string) *slot {
	if o.fields == nil {
		o.fields = make(map[string]*slot)
	}
	s := &slot{name: name, idx: len(o.order)}
	o.fields[name] = s
	o.order = append(o.order, s)
	return s
}

func (o *objectShape) mergeFrom(src *objectShape) {
	for _, ss := range src.order {
		d := o.fields[ss.name]
		if d == nil {
			d = o.add(ss.name)
		}
		d.mergeFrom(ss)
	}
}

func (s *slot) object() *objectShape {
	if s.obj == nil {
		s.obj = &objectShape{}
	}
	return s.obj
}

func (s *slot) array() *arrayShape {
	if s.arr == nil {
		s.arr = &arrayShape{}
	}
	return s.arr
}

func (s *slot) mergeFrom(src *slot) {
	s.scalar = s.scalar.Union(src.scalar)
	if src.obj != nil {
		s.object().mergeFrom(src.obj)
	}
	if src.arr != nil {
		s.array().mergeFrom(src.arr)
	}
}

func (a *arrayShape) grow(width int) {
	if width > a.width {
		if cap(a.pos) >= width {
			a.pos = a.pos[:width]
		} else {
			p := make([]TypeSet, width)
			copy(p, a.pos)
			a.pos = p
		}
		a.width = width
	}
}

func (a *arrayShape) mergeFrom(src *arrayShape) {
	a.grow(src.width)
	for i, t := range src.pos {
		a.pos[i] = a.pos[i].Union(t)
	}
	if src.elemObj != nil {
		if a.elemObj == nil {
			a.elemObj = &objectShape{}
		}
		a.elemObj.mergeFrom(src.elemObj)
	}
	if src.elemArr != nil {
		if a.elemArr == nil {
			a.elemArr = &arrayShape{}
		}
		a.elemArr.mergeFrom(src.elemArr)
	}
}

// hasPrimitives reports whether any element of any array seen here was a
// primitive (null included).
func (a *arrayShape) hasPrimitives() bool {
	for _, t := range a.pos {
		if t != 0 {
			return true
		}
	}
	return false
}

// hasConcrete reports whether any element seen was a non-null primitive.
func (a *arrayShape) hasConcrete() bool {
	for _, t := range a.pos {
		if t.withoutNull() != 0 {
			return true
		}
	}
	return false
}

// structured reports whether elements were objects or arrays.
func (a *arrayShape) structured() bool { return a.elemObj != nil || a.elemArr != nil }
