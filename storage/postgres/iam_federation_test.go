package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestIAMFederationContract(t *testing.T) {
	db := openTest(t)
	storagetest.IAMFederation(t, func(t *testing.T) storage.IAMStores {
		if _, err := db.pool.Exec(context.Background(), `TRUNCATE iam_trusted_keys, iam_oidc_providers`); err != nil {
			t.Fatal(err)
		}
		return storage.IAMStores{TrustedKeys: db.TrustedKeys(), Providers: db.OIDCProviders()}
	})
}

// TestIAMFederationSurvivesReopen: records written through one pool are
// read by a fresh one, as after a restart or on another node.
func TestIAMFederationSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.pool.Exec(ctx, `TRUNCATE iam_trusted_keys, iam_oidc_providers`); err != nil {
		t.Fatal(err)
	}
	rc := "groups"
	if err := db.OIDCProviders().CreateProvider(ctx, &storage.OIDCProvider{ID: "p", Tenant: "T", WellKnownURI: "https://u", RolesClaim: &rc}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.TrustedKeys().PutTrustedKey(ctx, &storage.TrustedKey{KID: "k", Tenant: "T", JWK: []byte(`{"kty":"RSA","n":"x"}`), Issuers: []string{}}, storage.TrustedKeyPut{}); err != nil {
		t.Fatal(err)
	}
	other := openTest(t)
	p, err := other.OIDCProviders().GetProvider(ctx, "T", "p")
	if err != nil || p.RolesClaim == nil || *p.RolesClaim != "groups" || p.Issuers != nil || !p.Active() {
		t.Fatalf("provider after reopen: %+v %v", p, err)
	}
	k, err := other.TrustedKeys().GetTrustedKey(ctx, "T", "k")
	if err != nil || string(k.JWK) != `{"kty":"RSA","n":"x"}` || k.Issuers == nil || len(k.Issuers) != 0 {
		t.Fatalf("trusted key after reopen: %+v %v", k, err)
	}
}
