package federation

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// The parsers below take bytes from outside (an admin body, a remote
// IdP): any input must give a value or an error, never a panic.

func FuzzParseTrustedJWK(f *testing.F) {
	f.Add([]byte(`{"kty":"RSA","kid":"k","n":"AQAB","e":"AQAB"}`), "k")
	f.Fuzz(func(t *testing.T, b []byte, kid string) {
		pub, err := ParseTrustedJWK(b, 20, kid)
		if err == nil && (pub == nil || pub.N.BitLen() < minModulusBits || pub.N.BitLen() > maxModulusBits || pub.E%2 == 0) {
			t.Fatalf("accepted an out-of-bounds key: %v", pub)
		}
	})
}

func FuzzParseJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"RSA","kid":"k","n":"AQAB","e":"AQAB"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := ParseJWKS(b)
		if err != nil {
			return
		}
		for kid, k := range keys {
			if kid == "" || k.N.BitLen() < minModulusBits || k.N.BitLen() > maxModulusBits {
				t.Fatalf("kept an unusable key %q", kid)
			}
		}
	})
}

func FuzzParseDiscovery(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://i","jwks_uri":"https://i/jwks"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDiscovery(b)
		if err == nil && (d.Issuer == "" || d.JWKSURI == "") {
			t.Fatal("accepted a document without issuer or jwks_uri")
		}
	})
}

func FuzzRolesClaim(f *testing.F) {
	f.Add([]byte(`{"roles":["a","b"],"realm_access":{"roles":["c"]}}`), "realm_access.roles")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		var c jwt.MapClaims
		if jsonUnmarshal(b, &c) != nil {
			return
		}
		for _, r := range rolesFrom(c, name) {
			if r == "" {
				t.Fatal("empty role kept")
			}
		}
	})
}
