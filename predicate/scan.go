package predicate

import (
	"bytes"
)

// A small JSON scanner for leaf lookups over raw document bytes. It replaces
// buger/jsonparser on the evaluation path because it skips string bodies
// (most of a typical document) with bytes.IndexByte, which is vectorised,
// instead of a byte-at-a-time state machine: about 3x faster on 1 KB
// documents (docs/benchmarks-history.md, "Conditions"). It never allocates and never recurses, and
// on malformed input it reports "absent" rather than guessing. Like
// jsonparser, the first of duplicate keys wins; stored documents are
// normalised JSON, which has none.

type vtype uint8

const (
	vAbsent vtype = iota
	vString
	vNumber
	vObject
	vArray
	vBool
	vNull
)

func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the closing quote of a string whose
// body starts at i, or -1. Short bodies (most keys and values) are walked
// byte by byte, which beats the call overhead of bytes.IndexByte; past 32
// bytes the vectorised search takes over.
// stringEnd returns the index just past the closing quote of a string whose
// body starts at i, or -1.
func stringEnd(d []byte, i int) int {
	for {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		bs := 0
		for k := q - 1; k >= i && d[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// valueEnd returns the index just past the value starting at i, and its
// type; -1 when malformed.
func valueEnd(d []byte, i int) (int, vtype) {
	if i >= len(d) {
		return -1, vAbsent
	}
	switch c := d[i]; c {
	case '"':
		return stringEnd(d, i+1), vString
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = stringEnd(d, i+1)
				if i < 0 {
					return -1, vAbsent
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					if c == '{' {
						return i + 1, vObject
					}
					return i + 1, vArray
				}
			}
			i++
		}
		return -1, vAbsent
	case 't':
		if bytes.HasPrefix(d[i:], []byte("true")) {
			return i + 4, vBool
		}
	case 'f':
		if bytes.HasPrefix(d[i:], []byte("false")) {
			return i + 5, vBool
		}
	case 'n':
		if bytes.HasPrefix(d[i:], []byte("null")) {
			return i + 4, vNull
		}
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			j := i + 1
			for j < len(d) {
				switch d[j] {
				case ',', '}', ']', ' ', '\t', '\n', '\r':
					return j, vNumber
				}
				j++
			}
			return j, vNumber
		}
	}
	return -1, vAbsent
}

// value returns the value at i with its type; a string is returned without
// its quotes (escapes intact).
func value(d []byte, i int) ([]byte, vtype, int) {
	i = skipWS(d, i)
	end, t := valueEnd(d, i)
	if end < 0 {
		return nil, vAbsent, -1
	}
	if t == vString {
		return d[i+1 : end-1], t, end
	}
	return d[i:end], t, end
}

// member finds key in the object d (a whole object value).
func member(d []byte, key string) ([]byte, vtype) {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '{' {
		return nil, vAbsent
	}
	i++
	for {
		i = skipWS(d, i)
		if i >= len(d) || d[i] != '"' {
			return nil, vAbsent // '}' or malformed
		}
		ke := stringEnd(d, i+1)
		if ke < 0 {
			return nil, vAbsent
		}
		k := d[i+1 : ke-1]
		i = skipWS(d, ke)
		if i >= len(d) || d[i] != ':' {
			return nil, vAbsent
		}
		v, t, end := value(d, i+1)
		if end < 0 {
			return nil, vAbsent
		}
		if keyEqual(k, key) {
			return v, t
		}
		i = skipWS(d, end)
		if i >= len(d) || d[i] != ',' {
			return nil, vAbsent
		}
		i++
	}
}

func keyEqual(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return bstr(raw) == key
	}
	return unescapeSlow(raw) == key
}

// arrayIter walks the elements of an array value.
type arrayIter struct {
	d []byte
	i int
}

func newArrayIter(d []byte) (arrayIter, bool) {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '[' {
		return arrayIter{}, false
	}
	return arrayIter{d: d, i: i + 1}, true
}

// next returns the next element; ok is false at the end or on malformed
// input.
func (it *arrayIter) next() ([]byte, vtype, bool) {
	if it.i < 0 {
		return nil, vAbsent, false
	}
	i := skipWS(it.d, it.i)
	if i < len(it.d) && it.d[i] == ']' {
		it.i = -1
		return nil, vAbsent, false
	}
	v, t, end := value(it.d, i)
	if end < 0 {
		it.i = -1
		return nil, vAbsent, false
	}
	end = skipWS(it.d, end)
	switch {
	case end < len(it.d) && it.d[end] == ',':
		it.i = end + 1
	case end < len(it.d) && it.d[end] == ']':
		it.i = end
	default:
		it.i = -1
	}
	return v, t, true
}

// lookup follows keys ("name" or "[n]") from the value d.
func lookup(d []byte, keys []string) ([]byte, vtype) {
	v := d
	t := vObject
	if len(keys) == 0 {
		val, typ, end := value(d, 0)
		if end < 0 {
			return nil, vAbsent
		}
		return val, typ
	}
	for _, k := range keys {
		if len(k) > 0 && k[0] == '[' {
			if t != vArray && t != vObject {
				return nil, vAbsent
			}
			n := 0
			for _, c := range []byte(k[1 : len(k)-1]) {
				n = n*10 + int(c-'0')
			}
			it, ok := newArrayIter(v)
			if !ok {
				return nil, vAbsent
			}
			found := false
			for j := 0; ; j++ {
				ev, et, ok := it.next()
				if !ok {
					break
				}
				if j == n {
					v, t, found = ev, et, true
					break
				}
			}
			if !found {
				return nil, vAbsent
			}
			continue
		}
		if t != vObject {
			return nil, vAbsent
		}
		v, t = member(v, k)
		if t == vAbsent {
			return nil, vAbsent
		}
	}
	return v, t
}
