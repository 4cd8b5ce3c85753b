package predicate

import "bytes"

// Doc is a document prepared for repeated evaluation: its top-level members
// are located once, so a leaf lookup skips straight to its member instead
// of scanning the bytes before it. A memory engine that keeps Docs beside
// its stored bytes scans at the cost of the condition, not of the
// document's size. Raw must not be modified while the Doc is in use (the
// index points into it).
type Doc struct {
	Raw     []byte
	members []docMember
	ok      bool // Raw is an object whose members were all read
}

type docMember struct {
	key string
	val []byte
	typ vtype
}

// NewDoc indexes raw. Malformed input is allowed: lookups then fall back to
// scanning the bytes and find what Match would find.
func NewDoc(raw []byte) *Doc {
	d := &Doc{Raw: raw}
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return d
	}
	i++
	for {
		i = skipWS(raw, i)
		if i < len(raw) && raw[i] == '}' && len(d.members) == 0 {
			d.ok = true
			return d
		}
		if i >= len(raw) || raw[i] != '"' {
			return d
		}
		ke := stringEnd(raw, i+1)
		if ke < 0 {
			return d
		}
		k := raw[i+1 : ke-1]
		i = skipWS(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return d
		}
		v, t, end := value(raw, i+1)
		if end < 0 {
			return d
		}
		key := bstr(k)
		if bytes.IndexByte(k, '\\') >= 0 {
			key = unescapeSlow(k)
		}
		d.members = append(d.members, docMember{key: key, val: v, typ: t})
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == '}' {
			d.ok = true
			return d
		}
		if i >= len(raw) || raw[i] != ',' {
			return d
		}
		i++
	}
}

// member returns the first top-level member named key.
func (d *Doc) member(key string) ([]byte, vtype) {
	for i := range d.members {
		if d.members[i].key == key {
			return d.members[i].val, d.members[i].typ
		}
	}
	return nil, vAbsent
}

// MatchDoc is Match over a prepared document.
func (c *Condition) MatchDoc(d *Doc, m *Meta) bool {
	ok, err := c.root.evalSrc(src{raw: d.Raw, doc: d}, m, nil)
	return ok && err == nil
}

// EvalDoc is Eval over a prepared document.
func (c *Condition) EvalDoc(d *Doc, m *Meta, fc FunctionCaller) (bool, error) {
	return c.root.evalSrc(src{raw: d.Raw, doc: d}, m, fc)
}

// src is the document under evaluation: its bytes, and its index when the
// caller prepared one.
type src struct {
	raw []byte
	doc *Doc
}

// top looks up the first chunk of a path, through the index when there is
// one.
func (s src) top(keys []string) ([]byte, vtype) {
	if s.doc == nil || !s.doc.ok || len(keys) == 0 || (len(keys[0]) > 0 && keys[0][0] == '[') {
		return lookup(s.raw, keys)
	}
	v, t := s.doc.member(keys[0])
	if t == vAbsent || len(keys) == 1 {
		return v, t
	}
	if t != vObject && t != vArray {
		return nil, vAbsent
	}
	return lookup(v, keys[1:])
}
