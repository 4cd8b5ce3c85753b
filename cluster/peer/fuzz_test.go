package peer

import (
	"testing"
	"time"
)

// FuzzGuardOpen: whatever arrives on an internal route, Open either
// refuses it or returns what the key sealed; it never panics, and a body
// the key did not seal never opens.
func FuzzGuardOpen(f *testing.F) {
	k, err := NewKey(make([]byte, 32))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	f.Add([]byte(ContentType), []byte("1800000000"), k.Seal("POST", route, 1_800_000_000, []byte(`{"type":"x"}`)))
	f.Add([]byte(ContentType), []byte("-1"), []byte{})
	f.Add([]byte("text/plain"), []byte("18e8"), []byte("0123456789abcdefghijklmnopqrstuvwxyz"))
	f.Fuzz(func(t *testing.T, ctype, ts, body []byte) {
		g := NewGuard(k).WithClock(func() time.Time { return now })
		plain, _, err := g.Open("POST", route, ctype, ts, body)
		if err != nil {
			return
		}
		// It opened: it must be a genuine seal of plain.
		if len(body) != NonceSize+len(plain)+16 {
			t.Fatalf("opened a body of %d bytes to %d bytes of plaintext", len(body), len(plain))
		}
		if _, _, err := g.Open("POST", route, ctype, ts, body); err == nil {
			t.Fatal("the same body opened twice")
		}
	})
}
