// Package jsondoc decides what svc accepts as a JSON document, in one pass
// over the raw bytes: the document must be RFC 8259 JSON and an I-JSON
// message (RFC 7493) whose text PostgreSQL can hold. Refused:
//
//   - a duplicate member name in any object at any depth (after unescaping,
//     so "a" and "\u0061" are the same name): a search reads one value and
//     a merge patch another, so a filter could be evaded;
//   - a NUL character (\u0000) in any string or member name, which neither
//     PostgreSQL's jsonb nor its text type can store;
//   - an escaped lone surrogate (\ud800 without its pair, or a lone low
//     surrogate), which is not a character;
//   - bytes that are not UTF-8 (RFC 8259 §8.1), including encoded
//     surrogates and overlong forms;
//   - nesting deeper than MaxDepth.
//
// Both storage engines get the same answer because the check runs before
// either sees the document. Valid documents cost no allocation: the
// checker and its stacks are pooled.
package jsondoc

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxDepth is the deepest container nesting accepted; encoding/json, which
// several paths use after this check, refuses deeper documents too.
const MaxDepth = 10000

// Kind says why a document was refused.
type Kind uint8

const (
	// Syntax: not JSON at all (callers keep their own "invalid JSON" wording).
	Syntax Kind = iota + 1
	// Text: a NUL, a lone surrogate or bytes that are not UTF-8.
	Text
	// DuplicateKey: an object names a member twice.
	DuplicateKey
	// TooDeep: nesting beyond MaxDepth.
	TooDeep
)

// Error is a refused document: why, where (JSON path of the value, or of
// the object whose member name is at fault) and, for DuplicateKey, the name.
type Error struct {
	Kind   Kind
	Offset int    // byte offset of the fault
	Path   string // e.g. $.lines[2].sku
	Key    string // the duplicate member name, unescaped
	Reason string // what is wrong, for people
}

func (e *Error) Error() string {
	switch e.Kind {
	case DuplicateKey:
		return "duplicate key " + strconv.Quote(e.Key) + " at " + e.Path
	case Syntax:
		return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
	}
	return e.Reason + " at " + e.Path
}

// seed keys the member-name hashes per process, so no one can prepare
// colliding names; collisions are resolved by comparing names anyway.
var seed = maphash.MakeSeed()

// keyRef is one member name of an open object: where its raw (still
// escaped) bytes are, a cheap fingerprint (length and first eight bytes of
// the unescaped name) that settles most comparisons, and its hash once the
// object is indexed.
type keyRef struct {
	h          uint64
	pre        uint64
	start, end int32
	n          int32 // unescaped length
	esc        bool
}

// prefix is the fingerprint's first eight bytes of name; raw is the
// document from the name on, for a single load of a short name.
func prefix(name []byte, raw []byte) uint64 {
	if len(name) >= 8 {
		return load64(name)
	}
	if len(raw) >= 8 {
		return load64(raw) & (1<<(8*len(name)) - 1)
	}
	var v uint64
	for i, ch := range name {
		v |= uint64(ch) << (8 * i)
	}
	return v
}

// frame is one open container. Objects own keys[base:] up to the next
// object frame's base; an object with more than linearKeys members indexes
// them in sets[set].
type frame struct {
	obj  bool
	base int32 // objects: first key index
	n    int32 // arrays: elements seen (the current index)
	set  int32 // objects: index into sets, -1 while scanned linearly
}

// linearKeys is how many members an object may have before its names are
// indexed by hash instead of compared one by one.
const linearKeys = 16

type checker struct {
	b       []byte
	i       int
	stack   []frame
	keys    []keyRef
	sets    []map[uint64]int32
	freeSet []int32
	s1, s2  []byte // unescape scratch
	// inName: the fault is in a member name of the innermost object, not
	// in the value of its last member.
	inName bool
}

var pool = sync.Pool{New: func() any {
	return &checker{stack: make([]frame, 0, 32), keys: make([]keyRef, 0, 64)}
}}

// Check reports whether b is a document svc accepts; nil when it is,
// otherwise an *Error. b is not retained.
func Check(b []byte) error {
	c := pool.Get().(*checker)
	err := c.run(b)
	c.b = nil
	// A hostile document may have grown the stacks: do not keep them.
	// (a wide object's index map is as big as its share of keys).
	if cap(c.stack) <= 4096 && cap(c.keys) <= 1<<16 && len(c.sets) <= 64 && cap(c.s1) <= 1<<16 && cap(c.s2) <= 1<<16 {
		pool.Put(c)
	}
	return err
}

// ValidText reports whether s can be stored as text: UTF-8 without NUL.
func ValidText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			return false
		}
		if c >= utf8.RuneSelf {
			return utf8.ValidString(s[i:]) && strings.IndexByte(s[i:], 0) < 0
		}
	}
	return true
}

// ValidTextBytes is ValidText for bytes.
func ValidTextBytes(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == 0 {
			return false
		}
		if c >= utf8.RuneSelf {
			for _, c := range b[i:] {
				if c == 0 {
					return false
				}
			}
			return utf8.Valid(b[i:])
		}
	}
	return true
}

// TextFault says what is wrong with text ValidText refuses ("" when
// nothing is).
func TextFault(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "holds a NUL character"
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

func (c *checker) fail(k Kind, reason string) *Error {
	e := &Error{Kind: k, Offset: c.i, Reason: reason}
	if k != Syntax {
		e.Path = c.path()
	}
	return e
}

func (c *checker) run(b []byte) error {
	c.b, c.i = b, 0
	c.stack = c.stack[:0]
	c.keys = c.keys[:0]
	c.inName = false
	defer c.releaseSets()
	c.ws()
	if c.i >= len(b) {
		return c.fail(Syntax, "empty document")
	}
	for {
		// A value.
		if c.i >= len(b) {
			return c.fail(Syntax, "unexpected end")
		}
		switch ch := b[c.i]; {
		case ch == '{':
			if err := c.push(true); err != nil {
				return err
			}
			c.i++
			c.ws()
			if c.i < len(b) && b[c.i] == '}' {
				c.i++
				c.pop()
				break
			}
			if err := c.member(); err != nil {
				return err
			}
			continue
		case ch == '[':
			if err := c.push(false); err != nil {
				return err
			}
			c.i++
			c.ws()
			if c.i < len(b) && b[c.i] == ']' {
				c.i++
				c.pop()
				break
			}
			continue
		case ch == '"':
			c.i++
			if _, err := c.str(); err != nil {
				return err
			}
		case ch == '-' || (ch >= '0' && ch <= '9'):
			if err := c.number(); err != nil {
				return err
			}
		case ch == 't':
			if err := c.lit("true"); err != nil {
				return err
			}
		case ch == 'f':
			if err := c.lit("false"); err != nil {
				return err
			}
		case ch == 'n':
			if err := c.lit("null"); err != nil {
				return err
			}
		default:
			return c.fail(Syntax, "unexpected "+quoteByte(ch))
		}
		// After a value: close containers, or move to the next element.
		for {
			c.ws()
			if len(c.stack) == 0 {
				if c.i != len(b) {
					return c.fail(Syntax, "data after the document")
				}
				return nil
			}
			if c.i >= len(b) {
				return c.fail(Syntax, "unexpected end")
			}
			top := &c.stack[len(c.stack)-1]
			ch := b[c.i]
			if ch == ',' {
				c.i++
				c.ws()
				if top.obj {
					if err := c.member(); err != nil {
						return err
					}
				} else {
					top.n++
				}
				break
			}
			if (top.obj && ch == '}') || (!top.obj && ch == ']') {
				c.i++
				c.pop()
				continue
			}
			return c.fail(Syntax, "unexpected "+quoteByte(ch))
		}
	}
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	return strconv.Quote(string(rune(c)))
}

func (c *checker) push(obj bool) error {
	if len(c.stack) >= MaxDepth {
		return c.fail(TooDeep, "nesting deeper than "+strconv.Itoa(MaxDepth))
	}
	c.stack = append(c.stack, frame{obj: obj, base: int32(len(c.keys)), set: -1})
	return nil
}

func (c *checker) pop() {
	f := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	if f.obj {
		c.keys = c.keys[:f.base]
		if f.set >= 0 {
			clear(c.sets[f.set])
			c.freeSet = append(c.freeSet, f.set)
		}
	}
}

func (c *checker) releaseSets() {
	for _, f := range c.stack {
		if f.obj && f.set >= 0 {
			clear(c.sets[f.set])
			c.freeSet = append(c.freeSet, f.set)
		}
	}
}

// member reads a member name and its ':' (c.i at the name's quote) and
// refuses a name its object already has.
func (c *checker) member() error {
	b := c.b
	if c.i >= len(b) || b[c.i] != '"' {
		if c.i >= len(b) {
			return c.fail(Syntax, "unexpected end")
		}
		return c.fail(Syntax, "expected a member name, found "+quoteByte(b[c.i]))
	}
	c.i++
	start := c.i
	c.inName = true
	esc, err := c.str()
	if err != nil {
		if e := (*Error)(nil); errors.As(err, &e) && e.Kind == Text {
			e.Reason += " in a member name"
		}
		return err
	}
	end := c.i - 1
	name := b[start:end]
	if esc {
		c.s1 = unescape(c.s1[:0], name)
		name = c.s1
	}
	raw := b[start:]
	if esc {
		raw = nil
	}
	k := keyRef{pre: prefix(name, raw), start: int32(start), end: int32(end), n: int32(len(name)), esc: esc}
	top := &c.stack[len(c.stack)-1]
	if top.set >= 0 {
		k.h = maphash.Bytes(seed, name)
	}
	if dup := c.seen(top, &k, name); dup {
		c.i = start - 1
		e := c.fail(DuplicateKey, "duplicate key")
		e.Key = string(name)
		var sb strings.Builder
		sb.WriteString(e.Path)
		appendSegment(&sb, e.Key)
		e.Path = sb.String()
		return e
	}
	c.inName = false
	c.keys = append(c.keys, k)
	if top.set >= 0 {
		c.sets[top.set][k.h] = int32(len(c.keys) - 1)
	}
	c.ws()
	if c.i >= len(b) || b[c.i] != ':' {
		if c.i >= len(b) {
			return c.fail(Syntax, "unexpected end")
		}
		return c.fail(Syntax, "expected ':', found "+quoteByte(b[c.i]))
	}
	c.i++
	c.ws()
	return nil
}

// seen reports whether the object of top already has the name k; k.h is
// set when the object is indexed.
func (c *checker) seen(top *frame, k *keyRef, name []byte) bool {
	own := c.keys[top.base:]
	if top.set < 0 {
		for i := range own {
			if own[i].pre == k.pre && own[i].n == k.n && c.same(&own[i], name) {
				return true
			}
		}
		if len(own) >= linearKeys {
			c.index(top)
			k.h = maphash.Bytes(seed, name)
		}
		return false
	}
	j, ok := c.sets[top.set][k.h]
	if !ok {
		return false
	}
	if c.same(&c.keys[j], name) {
		return true
	}
	// Two names share a hash: compare with every name (never in practice).
	for i := range own {
		if own[i].pre == k.pre && own[i].n == k.n && c.same(&own[i], name) {
			return true
		}
	}
	return false
}

// index starts a hash index for the object of top.
func (c *checker) index(top *frame) {
	var id int32
	if n := len(c.freeSet); n > 0 {
		id = c.freeSet[n-1]
		c.freeSet = c.freeSet[:n-1]
	} else {
		id = int32(len(c.sets))
		c.sets = append(c.sets, make(map[uint64]int32, 64))
	}
	m := c.sets[id]
	for i := int(top.base); i < len(c.keys); i++ {
		r := &c.keys[i]
		name := c.b[r.start:r.end]
		if r.esc {
			c.s2 = unescape(c.s2[:0], name)
			name = c.s2
		}
		r.h = maphash.Bytes(seed, name)
		if _, ok := m[r.h]; !ok {
			m[c.keys[i].h] = int32(i)
		}
	}
	top.set = id
}

// same compares a stored name with an unescaped name.
func (c *checker) same(r *keyRef, name []byte) bool {
	raw := c.b[r.start:r.end]
	if r.esc {
		c.s2 = unescape(c.s2[:0], raw)
		raw = c.s2
	}
	return string(raw) == string(name)
}

func (c *checker) ws() {
	b := c.b
	for c.i < len(b) {
		switch b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) lit(w string) error {
	if len(c.b)-c.i < len(w) || string(c.b[c.i:c.i+len(w)]) != w {
		return c.fail(Syntax, "invalid literal")
	}
	c.i += len(w)
	return nil
}

func (c *checker) number() error {
	b, i := c.b, c.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		c.i = i
		return c.fail(Syntax, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			c.i = i
			return c.fail(Syntax, "invalid number")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			c.i = i
			return c.fail(Syntax, "invalid number")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	c.i = i
	return nil
}

// Eight-byte words find the first quote, backslash, control character or
// non-ASCII byte at once. The borrow of the subtractions only runs upward,
// so the lowest flagged byte is exact.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func hasZero(v uint64) uint64 { return (v - ones) &^ v & highs }

// special flags the bytes of v that end a run of plain string bytes.
func special(v uint64) uint64 {
	return (hasZero(v^(ones*'"')) | hasZero(v^(ones*'\\')) | ((v - ones*0x20) &^ v) | v) & highs
}

func load64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// str scans a string from just after its opening quote to just after its
// closing one and reports whether it holds escapes.
func (c *checker) str() (bool, error) {
	b := c.b
	i := c.i
	esc := false
	for {
		for {
			if i+8 > len(b) {
				for i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
					i++
				}
				break
			}
			if m := special(load64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			c.i = i
			return esc, c.fail(Syntax, "unterminated string")
		}
		ch := b[i]
		switch {
		case ch == '"':
			c.i = i + 1
			return esc, nil
		case ch == '\\':
			esc = true
			if i+1 >= len(b) {
				c.i = i
				return esc, c.fail(Syntax, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r := hex4(b, i+2)
				if r < 0 {
					c.i = i
					return esc, c.fail(Syntax, "invalid \\u escape")
				}
				switch {
				case r == 0:
					c.i = i
					return esc, c.fail(Text, `NUL character (\u0000)`)
				case r >= 0xD800 && r < 0xDC00:
					lo := -1
					if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						lo = hex4(b, i+8)
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						c.i = i
						return esc, c.fail(Text, "lone surrogate (\\u"+strings.ToLower(string(b[i+2:i+6]))+")")
					}
					i += 12
				case r >= 0xDC00 && r < 0xE000:
					c.i = i
					return esc, c.fail(Text, "lone surrogate (\\u"+strings.ToLower(string(b[i+2:i+6]))+")")
				default:
					i += 6
				}
			default:
				c.i = i
				return esc, c.fail(Syntax, "invalid escape")
			}
		case ch < 0x20:
			c.i = i
			return esc, c.fail(Syntax, "control character in string")
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				c.i = i
				return esc, c.fail(Text, "bytes that are not UTF-8")
			}
			i += n
		}
	}
}

// hex4 decodes four hex digits at b[i:], or -1.
func hex4(b []byte, i int) int {
	if i+4 > len(b) {
		return -1
	}
	v := 0
	for _, ch := range b[i : i+4] {
		var d byte
		switch {
		case ch >= '0' && ch <= '9':
			d = ch - '0'
		case ch >= 'a' && ch <= 'f':
			d = ch - 'a' + 10
		case ch >= 'A' && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return -1
		}
		v = v<<4 | int(d)
	}
	return v
}

// unescape decodes the escapes of a string Check accepted (so every escape
// is valid and every surrogate paired).
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		ch := s[i]
		if ch != '\\' {
			dst = append(dst, ch)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := rune(hex4(s, i+2))
			if r >= 0xD800 && r < 0xDC00 {
				lo := rune(hex4(s, i+8))
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// path renders where the checker is: each open object's current member,
// each open array's current index.
func (c *checker) path() string {
	var sb strings.Builder
	sb.WriteByte('$')
	for d, f := range c.stack {
		if !f.obj {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(int(f.n)))
			sb.WriteByte(']')
			continue
		}
		end := int32(len(c.keys))
		for _, g := range c.stack[d+1:] {
			if g.obj {
				end = g.base
				break
			}
		}
		if end <= f.base {
			break // no member yet: the fault is in this object's first name
		}
		if d == len(c.stack)-1 && c.inName {
			break // the fault is in a member name: the object is the place
		}
		r := c.keys[end-1]
		name := c.b[r.start:r.end]
		if r.esc {
			name = unescape(nil, name)
		}
		appendSegment(&sb, string(name))
	}
	return sb.String()
}

func appendSegment(sb *strings.Builder, name string) {
	simple := name != ""
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch == '_' || ch == '-' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			simple = false
			break
		}
	}
	if simple {
		sb.WriteByte('.')
		sb.WriteString(name)
		return
	}
	sb.WriteString("[")
	sb.WriteString(strconv.Quote(name))
	sb.WriteString("]")
}
