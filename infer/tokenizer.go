package infer

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode/utf8"

	"svc/platform/apierr"
)

// tokenKind is what the tokenizer found next.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokObjectStart
	tokObjectEnd
	tokArrayStart
	tokArrayEnd
	tokKey // an object member name; its ':' is consumed with it
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

// Grammar states: what the next significant byte may be.
const (
	stValue           = iota // a value (document start, after ':' or an array ',')
	stFirstValueOrEnd        // after '[': a value or ']'
	stFirstKeyOrEnd          // after '{': a key or '}'
	stKey                    // after an object ',': a key
	stCommaOrEnd             // after a value inside a container
	stDone                   // after the top-level value: only whitespace
)

// tokenizer pulls JSON tokens from an in-memory document without building
// values. String and number tokens are slices of the input (strings without
// their quotes, still escaped when escaped is set), so nothing is allocated
// per token; the container stack is reused across documents.
type tokenizer struct {
	data    []byte
	pos     int
	state   uint8
	stack   []byte // '{' or '[' per open container
	escaped bool   // the last string or key holds backslash escapes
	// tape, when non-nil, receives the end offset of every string (its
	// closing quote, with tapeEscaped set when it holds escapes) and number,
	// in document order, so a second pass need not scan them again.
	tape      *[]uint32
	maxDepth  int
	maxNumber int
	maxString int
	// trusted skips UTF-8 validation: set for the second pass over a
	// document the validation pass already accepted.
	trusted bool
}

func (t *tokenizer) reset(data []byte, lim Limits) {
	t.data = data
	t.pos = 0
	t.state = stValue
	t.stack = t.stack[:0]
	t.escaped = false
	t.maxDepth = lim.MaxDepth
	t.maxNumber = lim.MaxNumberDigits
	t.maxString = lim.MaxStringBytes
	t.trusted = false
	t.tape = nil
}

// Tape entries keep an offset in the low 30 bits. tapeEscaped flags a
// string holding escapes; tapeDotted, set by the validation pass, a member
// name holding a dot.
const (
	tapeEscaped = 1 << 31
	tapeDotted  = 1 << 30
)

// depth is the number of open containers.
func (t *tokenizer) depth() int { return len(t.stack) }

func (t *tokenizer) fail(msg string) error {
	return &syntaxError{Offset: t.pos, Msg: msg}
}

// next returns the next token. Errors are *syntaxError for malformed input or
// *apierr.Error for a crossed limit.
func (t *tokenizer) next() (tokenKind, []byte, error) {
	t.skipSpace()
	switch t.state {
	case stCommaOrEnd:
		if t.pos >= len(t.data) {
			return tokEOF, nil, t.fail("unexpected end of input")
		}
		c := t.data[t.pos]
		top := t.stack[len(t.stack)-1]
		switch {
		case c == ',':
			t.pos++
			t.skipSpace()
			if top == '{' {
				return t.key()
			}
			return t.value()
		case c == '}' && top == '{':
			return t.close(tokObjectEnd)
		case c == ']' && top == '[':
			return t.close(tokArrayEnd)
		}
		return tokEOF, nil, t.fail("expected ',' or end of container")
	case stFirstKeyOrEnd:
		if t.pos < len(t.data) && t.data[t.pos] == '}' {
			return t.close(tokObjectEnd)
		}
		return t.key()
	case stKey:
		return t.key()
	case stFirstValueOrEnd:
		if t.pos < len(t.data) && t.data[t.pos] == ']' {
			return t.close(tokArrayEnd)
		}
		return t.value()
	case stValue:
		return t.value()
	}
	if t.pos < len(t.data) {
		return tokEOF, nil, t.fail("unexpected data after the top-level value")
	}
	return tokEOF, nil, nil
}

func (t *tokenizer) close(k tokenKind) (tokenKind, []byte, error) {
	t.pos++
	t.stack = t.stack[:len(t.stack)-1]
	t.afterValue()
	return k, nil, nil
}

func (t *tokenizer) afterValue() {
	if len(t.stack) == 0 {
		t.state = stDone
	} else {
		t.state = stCommaOrEnd
	}
}

func (t *tokenizer) key() (tokenKind, []byte, error) {
	if t.pos >= len(t.data) || t.data[t.pos] != '"' {
		return tokEOF, nil, t.fail("expected a string key")
	}
	s, err := t.str()
	if err != nil {
		return tokEOF, nil, err
	}
	t.skipSpace()
	if t.pos >= len(t.data) || t.data[t.pos] != ':' {
		return tokEOF, nil, t.fail("expected ':' after key")
	}
	t.pos++
	t.state = stValue
	return tokKey, s, nil
}

func (t *tokenizer) value() (tokenKind, []byte, error) {
	if t.pos >= len(t.data) {
		return tokEOF, nil, t.fail("unexpected end of input, expected a value")
	}
	switch c := t.data[t.pos]; c {
	case '{', '[':
		if len(t.stack) >= t.maxDepth {
			return tokEOF, nil, limitError("MaxDepth", t.maxDepth, "document nesting depth")
		}
		t.stack = append(t.stack, c)
		t.pos++
		if c == '{' {
			t.state = stFirstKeyOrEnd
			return tokObjectStart, nil, nil
		}
		t.state = stFirstValueOrEnd
		return tokArrayStart, nil, nil
	case '"':
		s, err := t.str()
		if err != nil {
			return tokEOF, nil, err
		}
		t.afterValue()
		return tokString, s, nil
	case 't':
		return t.literal("true", tokTrue)
	case 'f':
		return t.literal("false", tokFalse)
	case 'n':
		return t.literal("null", tokNull)
	default:
		if c == '-' || isDigit(c) {
			return t.number()
		}
	}
	return tokEOF, nil, t.fail("unexpected character, expected a value")
}

func (t *tokenizer) literal(word string, k tokenKind) (tokenKind, []byte, error) {
	if len(t.data)-t.pos < len(word) || string(t.data[t.pos:t.pos+len(word)]) != word {
		return tokEOF, nil, t.fail("invalid literal")
	}
	t.pos += len(word)
	t.afterValue()
	return k, nil, nil
}

// number validates -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? and returns its text.
func (t *tokenizer) number() (tokenKind, []byte, error) {
	d := t.data
	start := t.pos
	i := start
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		t.pos = i
		return tokEOF, nil, t.fail("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			t.pos = i
			return tokEOF, nil, t.fail("invalid number: digit expected after '.'")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			t.pos = i
			return tokEOF, nil, t.fail("invalid number: digit expected in exponent")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i-start > t.maxNumber {
		t.pos = start
		return tokEOF, nil, limitError("MaxNumberDigits", t.maxNumber, "number literal length")
	}
	t.pos = i
	t.afterValue()
	if t.tape != nil {
		*t.tape = append(*t.tape, uint32(i))
	}
	return tokNumber, d[start:i], nil
}

// strSafe marks bytes that need no attention inside a string.
var strSafe = func() (tab [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		tab[c] = c != '"' && c != '\\'
	}
	return
}()

// str scans the string at pos (which holds the opening quote) and returns its
// raw contents. Escapes are validated, not decoded; invalid UTF-8 and control
// characters are rejected because they cannot be written back out as JSON.
func (t *tokenizer) str() ([]byte, error) {
	d := t.data
	start := t.pos + 1
	i := start
	t.escaped = false
	for {
		// Eight bytes at a time while none needs attention: no quote,
		// backslash, control character or non-ASCII byte.
		for i+8 <= len(d) {
			v := binary.LittleEndian.Uint64(d[i:])
			if m := (hasLess(v, 0x20) | hasZero(v^0x2222222222222222) | hasZero(v^0x5C5C5C5C5C5C5C5C) | v) & 0x8080808080808080; m != 0 {
				// The lowest flagged byte is exact (borrows only run
				// upwards): jump straight to it.
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(d) && strSafe[d[i]] {
			i++
		}
		if i >= len(d) {
			t.pos = i
			return nil, t.fail("unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			if i-start > t.maxString {
				t.pos = start
				return nil, limitError("MaxStringBytes", t.maxString, "string length")
			}
			t.pos = i + 1
			if t.tape != nil {
				e := uint32(i)
				if t.escaped {
					e |= tapeEscaped
				}
				*t.tape = append(*t.tape, e)
			}
			return d[start:i], nil
		case c == '\\':
			t.escaped = true
			if i+1 >= len(d) {
				t.pos = i
				return nil, t.fail("unterminated escape")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					t.pos = i
					return nil, t.fail("invalid \\u escape")
				}
				i += 6
			default:
				t.pos = i
				return nil, t.fail("invalid escape")
			}
		case c < 0x20:
			t.pos = i
			return nil, t.fail("control character in string")
		default:
			if t.trusted {
				i++
				continue
			}
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size <= 1 {
				t.pos = i
				return nil, t.fail("invalid UTF-8 in string")
			}
			i += size
		}
	}
}

func (t *tokenizer) skipSpace() {
	d := t.data
	i := t.pos
	if i < len(d) && d[i] > ' ' {
		return // compact JSON: the common case
	}
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		break
	}
	t.pos = i
}

// hasZero and hasLess are the classic SWAR tests: the high bit of a result
// byte is set where a byte of v is zero / below n (exact as to whether any
// such byte exists).
func hasZero(v uint64) uint64 { return (v - 0x0101010101010101) &^ v & 0x8080808080808080 }

func hasLess(v uint64, n byte) uint64 {
	return (v - 0x0101010101010101*uint64(n)) &^ v & 0x8080808080808080
}

func isHex(c byte) bool {
	return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// unescape appends the decoded form of a raw JSON string body to dst. Lone
// surrogates become U+FFFD, as encoding/json does.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
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
			r := rune(hex4(s[i+2 : i+6]))
			i += 6
			if utf16IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					lo := rune(hex4(s[i+2 : i+6]))
					if lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						i += 6
						dst = utf8.AppendRune(dst, r)
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

func utf16IsSurrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }

func hex4(b []byte) int {
	v := 0
	for _, c := range b {
		switch {
		case isDigit(c):
			v = v<<4 | int(c-'0')
		default:
			v = v<<4 | int(c|0x20-'a'+10)
		}
	}
	return v
}

// isLimit reports whether err is a crossed bound rather than bad syntax.
func isLimit(err error) bool {
	var e *apierr.Error
	return errors.As(err, &e)
}
