package authcache

import (
	"context"
	"errors"
	"strings"
	"testing"

	"svc/iam"
)

// FuzzAuthenticateHeader: any Authorization header is classified as
// missing, malformed or invalid (never verified: the fuzzer cannot forge
// RS256), and "missing" only when no Bearer scheme was named.
func FuzzAuthenticateHeader(f *testing.F) {
	fx := newFixture(f)
	a := &Authenticator{C: fx.cache}
	f.Add("")
	f.Add("Bearer ")
	f.Add("bearer a.b.c")
	f.Add("Basic Zm9vOmJhcg==")
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.")
	f.Add("Bearer a..c")
	f.Fuzz(func(t *testing.T, h string) {
		p, err := a.Authenticate(context.Background(), []byte(h), nil)
		if err == nil {
			t.Fatalf("header %q authenticated %+v", h, p)
		}
		got := h
		switch {
		case errors.Is(err, iam.ErrTokenMissing):
			if len(got) >= 7 && strings.EqualFold(got[:7], "bearer ") {
				t.Fatalf("%q named Bearer but was called missing", got)
			}
		case errors.Is(err, iam.ErrTokenMalformed), errors.Is(err, iam.ErrTokenInvalid):
		default:
			t.Fatalf("unclassified error %v", err)
		}
		if errors.Is(err, iam.ErrTokenInvalid) && !jwtShaped([]byte(got[7:])) {
			t.Fatalf("%q is not JWT-shaped but was called invalid", got)
		}
	})
}
