package predicate

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/buger/jsonparser"
)

// FunctionCaller evaluates function criteria (a compute member in the
// service); the caller binds it to the entity and request context.
type FunctionCaller interface {
	CallFunction(f *Function) (bool, error)
}

// ErrNoFunctionCaller is returned by Eval when the condition holds a
// function criterion and no FunctionCaller was given.
var ErrNoFunctionCaller = errors.New("predicate: function condition needs a function caller")

// Match evaluates the condition against an entity: doc is its JSON
// document, m its meta (nil: every meta field absent). A function
// criterion cannot be answered here and makes Match false; use Eval for
// conditions with HasFunctions. Match allocates nothing for conditions
// over plain paths.
func (c *Condition) Match(doc []byte, m *Meta) bool {
	ok, err := c.root.evalSrc(src{raw: doc}, m, nil)
	return ok && err == nil
}

// Eval is Match with function criteria answered by fc, left to right with
// AND/OR short-circuiting, so a function is only called when it decides.
func (c *Condition) Eval(doc []byte, m *Meta, fc FunctionCaller) (bool, error) {
	return c.root.evalSrc(src{raw: doc}, m, fc)
}

func (n *node) evalSrc(doc src, m *Meta, fc FunctionCaller) (bool, error) {
	switch n.kind {
	case nData:
		return n.data.eval(doc), nil
	case nMeta:
		return n.meta.eval(m), nil
	case nAnd:
		for _, ch := range n.children {
			ok, err := ch.evalSrc(doc, m, fc)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case nOr:
		for _, ch := range n.children {
			ok, err := ch.evalSrc(doc, m, fc)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case nNot:
		ok, err := n.children[0].evalSrc(doc, m, fc)
		return !ok && err == nil, err
	case nFunc:
		if fc == nil {
			return false, ErrNoFunctionCaller
		}
		return fc.CallFunction(n.fn)
	}
	return false, nil
}

func (l *dataLeaf) eval(doc src) bool {
	if l.never {
		return false
	}
	v, t := doc.top(l.p.chunks[0])
	if l.op == OpIsNull {
		return !l.from(v, t, 0)
	}
	return l.from(v, t, 0)
}

// find reports whether some value reached by the path from data (at
// wildcard level lvl) satisfies the leaf: existential over every [*] hop.
// For IS_NULL it looks for a non-null value, which eval negates.
func (l *dataLeaf) find(data []byte, lvl int) bool {
	v, t := lookup(data, l.p.chunks[lvl])
	return l.from(v, t, lvl)
}

// from continues find with the value the chunk at lvl led to.
func (l *dataLeaf) from(v []byte, t vtype, lvl int) bool {
	if t == vAbsent {
		return false
	}
	if lvl == len(l.p.chunks)-1 {
		return l.test(v, t)
	}
	it, ok := newArrayIter(v)
	if !ok {
		return false
	}
	direct := lvl+1 == len(l.p.chunks)-1 && len(l.p.chunks[lvl+1]) == 0
	for {
		ev, et, ok := it.next()
		if !ok {
			return false
		}
		if direct {
			if l.test(ev, et) {
				return true
			}
		} else if (et == vObject || et == vArray) && l.find(ev, lvl+1) {
			return true
		}
	}
}

// bstr views bytes as a string without copying; the string never outlives
// the evaluation.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// test applies the leaf to one stored value.
func (l *dataLeaf) test(v []byte, t vtype) bool {
	switch l.op.family() {
	case famPresence:
		return t != vNull
	case famCompare, famRange:
		switch t {
		case vNumber:
			if l.num == nil {
				return false
			}
			d, ok := parseDec(v, false)
			if !ok {
				return false
			}
			c2 := 0
			if l.op.family() == famRange {
				c2 = cmpDec(&d, &l.num.hi)
			}
			return applyCmp(l.op, cmpDec(&d, &l.num.lo), c2)
		case vString:
			s := unescape(v)
			if l.str != nil && (!l.str.eqOnly || !l.op.ordered()) {
				c2 := 0
				if l.op.family() == famRange {
					c2 = strings.Compare(bstr(s), l.str.hi)
				}
				if applyCmp(l.op, strings.Compare(bstr(s), l.str.lo), c2) {
					return true
				}
			}
			if len(l.tmp) > 0 {
				sub, ms, ok := classifyTemporal(s)
				if !ok {
					return false
				}
				for i := range l.tmp {
					b := &l.tmp[i]
					if b.typ == sub {
						return applyCmp(l.op, cmp64(ms, b.lo), cmp64(ms, b.hi))
					}
				}
			}
			return false
		case vBool:
			if l.boolv == 0 {
				return false
			}
			eq := (v[0] == 't') == (l.boolv == 2)
			return eq == (l.op == OpEquals)
		}
		return false
	}
	if t != vString {
		return false
	}
	return textOp(l.op, unescape(v), l.text, l.lower, l.like, l.re)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unescape returns the text of a raw JSON string body; only a body with
// escapes costs an allocation.
func unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return v
	}
	return []byte(unescapeSlow(v))
}

func unescapeSlow(v []byte) string {
	out, err := jsonparser.Unescape(v, nil)
	if err != nil {
		return string(v)
	}
	return string(out)
}

// textOp applies a string, case-insensitive or pattern operator to stored
// text s.
func textOp(op Op, s []byte, text, lower string, like []likeTok, re interface{ Match([]byte) bool }) bool {
	ss := bstr(s)
	switch op {
	case OpContains:
		return strings.Contains(ss, text)
	case OpNotContains:
		return !strings.Contains(ss, text)
	case OpStartsWith:
		return strings.HasPrefix(ss, text)
	case OpNotStartsWith:
		return !strings.HasPrefix(ss, text)
	case OpEndsWith:
		return strings.HasSuffix(ss, text)
	case OpNotEndsWith:
		return !strings.HasSuffix(ss, text)
	case OpIEquals:
		return strings.EqualFold(ss, text)
	case OpINotEqual:
		return !strings.EqualFold(ss, text)
	case OpLike:
		return likeMatch(like, s)
	case OpMatchesPattern:
		return re.Match(s)
	}
	var buf [256]byte
	ls := lowerInto(s, buf[:0])
	switch op {
	case OpIContains:
		return strings.Contains(ls, lower)
	case OpINotContains:
		return !strings.Contains(ls, lower)
	case OpIStartsWith:
		return strings.HasPrefix(ls, lower)
	case OpINotStartsWith:
		return !strings.HasPrefix(ls, lower)
	case OpIEndsWith:
		return strings.HasSuffix(ls, lower)
	case OpINotEndsWith:
		return !strings.HasSuffix(ls, lower)
	}
	return false
}

// lowerInto lower-cases ASCII text into buf without allocating, and falls
// back to strings.ToLower for other text.
func lowerInto(s []byte, buf []byte) string {
	if len(s) > cap(buf) {
		return strings.ToLower(string(s))
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return strings.ToLower(string(s))
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return bstr(buf)
}

func (l *metaLeaf) eval(m *Meta) bool {
	if l.never {
		return false
	}
	if l.field.temporal() {
		var t int64
		present := false
		if m != nil {
			tm := m.CreationDate
			if l.field == mLastUpdateTime {
				tm = m.LastUpdateTime
			}
			if !tm.IsZero() {
				present, t = true, tm.UnixMilli()
			}
		}
		switch l.op {
		case OpIsNull:
			return !present
		case OpNotNull:
			return present
		}
		return present && applyCmp(l.op, cmp64(t, l.msLo), cmp64(t, l.msHi))
	}
	if m == nil {
		return l.op == OpIsNull
	}
	var s string
	switch l.field {
	case mState:
		s = m.State
	case mTransition:
		s = m.TransitionForLatestSave
	case mTransactionID:
		s = m.TransactionID
	case mID:
		s = m.ID
	}
	switch l.op.family() {
	case famPresence:
		return l.op == OpNotNull // an empty meta string counts as present
	case famCompare, famRange:
		return applyCmp(l.op, strings.Compare(s, l.text), strings.Compare(s, l.hi))
	}
	return textOp(l.op, unsafe.Slice(unsafe.StringData(s), len(s)), l.text, l.lower, l.like, l.re)
}
