package fast

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// plainTextByByte is plainText one byte at a time, as first written.
func plainTextByByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c == '%' || c >= 0x80 {
			return false
		}
	}
	return true
}

// TestPlainTextWords: the eight-byte form answers as the byte form for
// every byte at every place, at lengths around the word boundaries.
func TestPlainTextWords(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 36, 41} {
		b := []byte(strings.Repeat("a-Z09~", 8)[:n])
		for i := range b {
			orig := b[i]
			for c := 0; c < 256; c++ {
				b[i] = byte(c)
				if got, want := plainText(string(b)), plainTextByByte(string(b)); got != want {
					t.Fatalf("%q: %v, byte form %v", b, got, want)
				}
			}
			b[i] = orig
		}
	}
}

// TestParseCanonicalUUID: the table decoder accepts exactly what
// uuid.Parse accepts among 36-byte strings, with the same value, for
// every byte at every place; other lengths are left to uuid.Parse.
func TestParseCanonicalUUID(t *testing.T) {
	for _, id := range []string{"0123abcd-ef45-6789-ABCD-EF0123456789", "ffffffff-FFFF-0000-9999-aAbBcCdDeEfF"} {
		b := []byte(id)
		for i := range b {
			orig := b[i]
			for c := 0; c < 256; c++ {
				b[i] = byte(c)
				got, ok := parseCanonicalUUID(string(b))
				want, err := uuid.Parse(string(b))
				if ok != (err == nil) || ok && got != [16]byte(want) {
					t.Fatalf("%q: %x %v, uuid.Parse %x %v", b, got, ok, want, err)
				}
			}
			b[i] = orig
		}
	}
	for _, s := range []string{"", "{0123abcd-ef45-6789-abcd-ef0123456789}", "0123abcdef456789abcdef0123456789",
		"urn:uuid:0123abcd-ef45-6789-abcd-ef0123456789"} {
		if _, ok := parseCanonicalUUID(s); ok {
			t.Fatalf("%q: decoded", s)
		}
	}
}
