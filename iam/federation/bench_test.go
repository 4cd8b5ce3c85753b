package federation

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/iam"
	"svc/storage/memory"
)

// BenchmarkVerifyProviderToken: a federated token of a registered provider
// whose JWKS is cached — the cost the authcache pays on a verified-token
// cache miss (parse, issuer routing, key lookup, RS256, claim rules).
func BenchmarkVerifyProviderToken(b *testing.B) {
	idp := newTestIdP(b)
	p, _ := newTestProviders(b, idp, nil)
	if _, err := p.Register(bg, tenantA, &ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown()), RolesClaim: strp("realm_access.roles")}); err != nil {
		b.Fatal(err)
	}
	tok := idp.Token(b, "k1", "alice", jwt.MapClaims{"realm_access": map[string]any{"roles": []any{"ROLE_ADMIN"}}})
	ver := p.Verifier()
	if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
			b.Fatal(err)
		}
	}
	if idp.JWKSHits.Load() != 1 {
		b.Fatalf("JWKS fetched %d times; the benchmark must run on the cached key", idp.JWKSHits.Load())
	}
}

// BenchmarkVerifyTrustedKeyToken: a token signed by a registered trusted key.
func BenchmarkVerifyTrustedKeyToken(b *testing.B) {
	tk := NewTrustedKeys(TrustedConfig{Enabled: true, MaxJWKProps: 20, Issuer: svcIssuer}, memory.NewIAMStores().TrustedKeys)
	k := testKey(b, 0)
	if _, err := tk.Register(bg, "A", &TrustedKeyRegistration{KeyID: "a1", JWK: json.RawMessage(jwkJSON("a1", &k.PublicKey))}); err != nil {
		b.Fatal(err)
	}
	tok := sign(b, k, "a1", fpClaims("A", nil))
	ver := tk.Verifier()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRSAVerifyBaseline is the bare RS256 check the two above build on.
func BenchmarkRSAVerifyBaseline(b *testing.B) {
	k := testKey(b, 0)
	tok := sign(b, k, "a1", fpClaims("A", nil))
	pub := &k.PublicKey
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := parser.Parse(tok, func(*jwt.Token) (any, error) { return pub, nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChainFederatedCached: a federated token through authcache's
// whole chain once its verification is cached — what every request after
// the first pays.
func BenchmarkChainFederatedCached(b *testing.B) {
	idp := newTestIdP(b)
	p, _ := newTestProviders(b, idp, nil)
	if _, err := p.Register(bg, tenantA, &ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())}); err != nil {
		b.Fatal(err)
	}
	cache := benchChain(b, p.Verifier())
	tok := []byte(idp.Token(b, "k1", "alice", nil))
	if _, err := cache.Verify(bg, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cache.Verify(bg, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChain is authcache's chain over a fresh own keyring with ext as
// its federated links.
func benchChain(b *testing.B, ext ...authcache.External) *authcache.Cache {
	der, _ := x509.MarshalPKCS8PrivateKey(testKey(b, 4))
	signing, err := iam.ParseSigningKey(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	if err != nil {
		b.Fatal(err)
	}
	keys, err := iam.NewKeys(memory.NewIAMStores().Keypairs, signing, "client", 365)
	if err != nil {
		b.Fatal(err)
	}
	if err := keys.Bootstrap(bg); err != nil {
		b.Fatal(err)
	}
	cache, err := authcache.New(keys, ext, authcache.Options{Issuer: "svc", ReconcileInterval: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if err := cache.Start(bg); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cache.Close)
	return cache
}
