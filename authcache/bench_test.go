package authcache

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"testing"

	"svc/iam"
	"svc/storage"
)

// BenchmarkVerifyCached is the hot path of every authenticated request: a
// token seen before, answered from the verified-token cache.
func BenchmarkVerifyCached(b *testing.B) {
	f := newFixture(b)
	tok := []byte(f.mint(b, f.keys.BootstrapKID(), nil))
	ctx := context.Background()
	if _, err := f.cache.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	f.cache.verified.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.cache.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateCached adds the header handling of the middleware.
func BenchmarkAuthenticateCached(b *testing.B) {
	f := newFixture(b)
	tok := f.mint(b, f.keys.BootstrapKID(), nil)
	a := &Authenticator{C: f.cache}
	h := []byte("Bearer " + tok)
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, h, nil); err != nil {
		b.Fatal(err)
	}
	f.cache.verified.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Authenticate(ctx, h, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyUncached is a full RS256 verification and claim check.
func BenchmarkVerifyUncached(b *testing.B) {
	f := newFixture(b)
	tok := f.mint(b, f.keys.BootstrapKID(), nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.cache.verifyOwn(context.Background(), tok, f.cache.now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssueClientCredentials signs a machine token; compare with
// BenchmarkRSASign2048, the raw crypto/rsa signing rate on this machine.
func BenchmarkIssueClientCredentials(b *testing.B) {
	f := newFixture(b)
	is := iam.NewIssuer(f.keys, "svc", "", 3600)
	c := &storage.M2MClient{ClientID: "C1", Tenant: "t1", UserID: "C1", Roles: []string{iam.RoleM2M}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := is.ClientCredentials(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRSASign2048(b *testing.B) {
	k := rsaKey()
	sum := sha256.Sum256([]byte("payload"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:]); err != nil {
			b.Fatal(err)
		}
	}
}
