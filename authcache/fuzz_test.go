package authcache

import (
	"context"
	"testing"
)

// FuzzVerify: arbitrary bearer bytes never panic the chain and never
// verify (the fuzzer cannot forge an RS256 signature).
func FuzzVerify(f *testing.F) {
	fx := newFixture(f)
	valid := fx.mint(f, fx.keys.BootstrapKID(), nil)
	f.Add([]byte(valid[:len(valid)-4] + "AAAA"))
	f.Add([]byte("eyJhbGciOiJub25lIn0.e30."))
	f.Add([]byte("a.b.c"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, tok []byte) {
		if string(tok) == valid {
			return
		}
		if p, err := fx.cache.Verify(context.Background(), tok); err == nil {
			t.Fatalf("forged token verified: %q → %+v", tok, p)
		}
	})
}
