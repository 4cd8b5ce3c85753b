package infer

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The SIMPLE_VIEW encoder collects every node and every object-node entry
// into flat tables whose strings live in one byte arena, sorts them, and
// writes compact JSON. Encoders are pooled: an export allocates only when a
// model is larger than any exported before.

type span struct{ lo, hi int32 }

type encNode struct {
	path    span
	kind    uint8 // nodeObject, nodeArray or nodeMixed
	arrDesc span  // descriptor JSON of an array or mixed node
	rank    int32 // position after sorting
}

const (
	nodeObject uint8 = iota
	nodeArray
	nodeMixed
)

type encEntry struct {
	node       int32
	structural bool
	key        span
	val        span // raw JSON of the value
}

type encoder struct {
	arena   []byte
	nodes   []encNode
	entries []encEntry
	walk    nodeWalk
	order   []int32
	hashes  []uint64 // node path hashes of a fingerprint
}

var encoderPool = sync.Pool{New: func() any { return &encoder{} }}

func (e *encoder) str(b []byte) span {
	lo := int32(len(e.arena))
	e.arena = append(e.arena, b...)
	return span{lo, int32(len(e.arena))}
}

func (e *encoder) bytesOf(s span) []byte { return e.arena[s.lo:s.hi] }

func (e *encoder) entry(node int32, structural bool, key []byte, val span) {
	e.entries = append(e.entries, encEntry{node: node, structural: structural, key: e.str(key), val: val})
}

// quotedDesc appends a descriptor as a JSON string to the arena.
func (e *encoder) typeDesc(t TypeSet) span {
	lo := int32(len(e.arena))
	e.arena = append(e.arena, '"')
	e.arena = t.appendDescriptor(e.arena)
	e.arena = append(e.arena, '"')
	return span{lo, int32(len(e.arena))}
}

var (
	constObject       = []byte(`"OBJECT"`)
	constArrayElement = []byte(`"ARRAY_ELEMENT"`)
)

// AppendSimpleView appends the SIMPLE_VIEW node map of m (the value of the
// export's "model" member) to dst: node paths sorted byte-wise, inside an
// object node the data keys sorted, then the structural keys sorted.
// The model does not know its lock state; AppendSimpleViewExport writes the
// whole export envelope.
func (m *Model) AppendSimpleView(dst []byte) []byte {
	e := encoderPool.Get().(*encoder)
	defer func() {
		if cap(e.arena) <= 4<<20 {
			encoderPool.Put(e)
		}
	}()
	e.arena, e.nodes, e.entries = e.arena[:0], e.nodes[:0], e.entries[:0]
	e.walk.v = e
	e.walk.run(m)
	return e.write(dst)
}

// AppendSimpleViewExport appends the whole export body
// {"currentState":…,"model":…}.
func (m *Model) AppendSimpleViewExport(dst []byte, locked bool) []byte {
	dst = appendEnvelopeStart(dst, locked)
	dst = m.AppendSimpleView(dst)
	return append(dst, '}')
}

func appendEnvelopeStart(dst []byte, locked bool) []byte {
	if locked {
		return append(dst, `{"currentState":"LOCKED","model":`...)
	}
	return append(dst, `{"currentState":"UNLOCKED","model":`...)
}

// The encoder is the SIMPLE_VIEW visitor of the shared node walk.

func (e *encoder) node(path []byte, kind uint8, arr *arrayShape) int32 {
	e.nodes = append(e.nodes, encNode{path: e.str(path), kind: kind})
	n := int32(len(e.nodes) - 1)
	if kind != nodeObject {
		e.nodes[n].arrDesc = e.detachedDesc(arr)
	}
	return n
}

func (e *encoder) scalar(node int32, key []byte, t TypeSet) {
	e.entry(node, false, key, e.typeDesc(t))
}

func (e *encoder) primArray(node int32, key []byte, a *arrayShape) {
	e.entry(node, false, key, e.arrayDesc(a))
}

func (e *encoder) arrayOfArrays(node int32, key []byte, a *arrayShape) {
	e.entry(node, false, key, e.arrayElementDesc(a.width))
}

func (e *encoder) structural(node int32, field []byte) {
	e.arena = append(e.arena, '#')
	hk := e.str(field)
	hk.lo-- // include the '#'
	e.entries = append(e.entries, encEntry{node: node, structural: true, key: hk, val: e.str(constObject)})
}

func (e *encoder) elementMarker(n int32) {
	e.arena = append(e.arena, '#')
	e.entries = append(e.entries, encEntry{node: n, structural: true,
		key: span{int32(len(e.arena) - 1), int32(len(e.arena))}, val: e.str(constArrayElement)})
}

// detachedDesc describes an array that has its own node: an array of
// containers prints (ARRAY_ELEMENT x n) and describes its elements one node
// deeper.
func (e *encoder) detachedDesc(a *arrayShape) span {
	if a.structured() {
		return e.arrayElementDesc(a.width)
	}
	return e.arrayDesc(a)
}

func (e *encoder) arrayElementDesc(width int) span {
	lo := int32(len(e.arena))
	e.arena = append(e.arena, `"(ARRAY_ELEMENT x `...)
	e.arena = strconv.AppendInt(e.arena, int64(width), 10)
	e.arena = append(e.arena, `)"`...)
	return span{lo, int32(len(e.arena))}
}

// norm treats "no primitive seen at this index" like NULL, which is how the
// export prints it.
func norm(t TypeSet) TypeSet {
	if t == 0 {
		return nullBit
	}
	return t
}

// arrayDesc is the UniTypeArray or MultiTypeArray descriptor of a's
// primitive positions.
func (e *encoder) arrayDesc(a *arrayShape) span {
	lo := int32(len(e.arena))
	uni := true
	for _, t := range a.pos {
		if norm(t) != norm(a.pos[0]) {
			uni = false
			break
		}
	}
	if uni {
		var t TypeSet
		if len(a.pos) > 0 {
			t = a.pos[0]
		}
		e.arena = append(e.arena, `"(`...)
		e.arena = t.appendDescriptor(e.arena)
		e.arena = append(e.arena, " x "...)
		e.arena = strconv.AppendInt(e.arena, int64(a.width), 10)
		e.arena = append(e.arena, `)"`...)
	} else {
		e.arena = append(e.arena, '[')
		for i, t := range a.pos {
			if i > 0 {
				e.arena = append(e.arena, ',')
			}
			e.arena = append(e.arena, '"')
			e.arena = t.appendDescriptor(e.arena)
			e.arena = append(e.arena, '"')
		}
		e.arena = append(e.arena, ']')
	}
	return span{lo, int32(len(e.arena))}
}

// write sorts the tables and appends the JSON.
func (e *encoder) write(dst []byte) []byte {
	e.order = e.order[:0]
	for i := range e.nodes {
		e.order = append(e.order, int32(i))
	}
	slices.SortFunc(e.order, func(a, b int32) int {
		return bytes.Compare(e.bytesOf(e.nodes[a].path), e.bytesOf(e.nodes[b].path))
	})
	for r, i := range e.order {
		e.nodes[i].rank = int32(r)
	}
	slices.SortFunc(e.entries, func(a, b encEntry) int {
		if ra, rb := e.nodes[a.node].rank, e.nodes[b.node].rank; ra != rb {
			return int(ra - rb)
		}
		if a.structural != b.structural {
			if a.structural {
				return 1
			}
			return -1
		}
		return bytes.Compare(e.bytesOf(a.key), e.bytesOf(b.key))
	})
	dst = append(dst, '{')
	j := 0
	for r, i := range e.order {
		n := &e.nodes[i]
		if r > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, e.bytesOf(n.path))
		dst = append(dst, ':')
		if n.kind == nodeArray {
			dst = append(dst, e.bytesOf(n.arrDesc)...)
			continue
		}
		if n.kind == nodeMixed {
			dst = append(dst, '[')
		}
		dst = append(dst, '{')
		first := true
		for ; j < len(e.entries) && e.entries[j].node == i; j++ {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendJSONString(dst, e.bytesOf(e.entries[j].key))
			dst = append(dst, ':')
			dst = append(dst, e.bytesOf(e.entries[j].val)...)
		}
		dst = append(dst, '}')
		if n.kind == nodeMixed {
			dst = append(dst, ',')
			dst = append(dst, e.bytesOf(n.arrDesc)...)
			dst = append(dst, ']')
		}
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string; s is valid UTF-8 (the
// tokenizer rejects anything else, and unescape writes U+FFFD for lone
// surrogates), but invalid bytes are replaced to keep the output valid.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
