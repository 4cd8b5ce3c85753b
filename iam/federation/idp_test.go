package federation

import (
	"context"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/iam/federation/federationtest"
	"svc/storage/memory"
)

type testIdP = federationtest.IdP

func newTestIdP(t testing.TB) *testIdP { return federationtest.NewIdP(t) }

func testKey(_ testing.TB, i int) *rsa.PrivateKey { return federationtest.Key(i) }

func sign(t testing.TB, k *rsa.PrivateKey, kid string, c jwt.MapClaims) string {
	return federationtest.Sign(t, k, kid, c)
}

func jwkJSON(kid string, pub *rsa.PublicKey) string { return federationtest.JWK(kid, pub) }

func newTestProviders(t testing.TB, idp *testIdP, mod func(*ProvidersConfig)) (*Providers, *memory.Providers) {
	t.Helper()
	store := memory.NewIAMStores().Providers.(*memory.Providers)
	cfg := ProvidersConfig{RolesClaim: "roles", RequireHTTPS: true, Net: idp.NetOptions(), ReconcileInterval: time.Minute}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewProviders(cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, store
}

var bg = context.Background()

const (
	tenantA = "0f8fad5b-d9cb-469f-a165-70867728950e"
	tenantB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

func strp(s string) *string { return &s }
