package fast

import "testing"

// canonicalUUIDBySwitch is canonicalUUID as first written: a switch on
// every byte's position.
func canonicalUUIDBySwitch(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// TestCanonicalUUIDTable: the table form answers as the switch form for
// every byte at every place of a canonical id, and for other lengths.
func TestCanonicalUUIDTable(t *testing.T) {
	for _, id := range []string{"0123abcd-ef45-6789-ABCD-EF0123456789", "00000000-0000-0000-0000-000000000000"} {
		b := []byte(id)
		if !canonicalUUID(b) {
			t.Fatalf("%s: not canonical", id)
		}
		for i := range b {
			orig := b[i]
			for c := 0; c < 256; c++ {
				b[i] = byte(c)
				if got, want := canonicalUUID(b), canonicalUUIDBySwitch(b); got != want {
					t.Fatalf("%q: %v, switch form %v", b, got, want)
				}
			}
			b[i] = orig
		}
		for _, n := range []int{0, 35, 37} {
			c := append([]byte(id), '0')[:n]
			if canonicalUUID(c) {
				t.Fatalf("%q (length %d): canonical", c, n)
			}
		}
	}
}
