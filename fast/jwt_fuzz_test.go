package fast

import (
	"net/url"
	"testing"
)

// FuzzBasicCredentials: the token endpoint's Basic parser never panics, and
// whatever it accepts splits at the first ':' and round-trips.
func FuzzBasicCredentials(f *testing.F) {
	f.Add([]byte("Basic " + b64("id:secret")))
	f.Add([]byte("basic  " + b64("a%3Ab:c:d")))
	f.Add([]byte("Basic " + b64("no-colon")))
	f.Add([]byte("Basic ===="))
	f.Fuzz(func(t *testing.T, h []byte) {
		id, secret, ok := basicCredentials(h)
		if !ok {
			return
		}
		// Re-encoding must authenticate as the same pair.
		id2, secret2, ok2 := basicCredentials([]byte("Basic " + b64(url.QueryEscape(id)+":"+url.QueryEscape(secret))))
		if !ok2 || id2 != id || secret2 != secret {
			t.Fatalf("round trip: %q:%q → %q:%q", id, secret, id2, secret2)
		}
	})
}
