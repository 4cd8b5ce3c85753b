package fast

import (
	"io"
	"strings"
	"testing"

	"svc/storage"
)

// TestKeypairsNeedBootstrapTenantAdmin: signing keypairs are the service's.
// With real RS256 tokens in jwt mode, an administrator of another tenant
// (and a non-administrator of the bootstrap tenant) gets 403 FORBIDDEN on
// every keypair operation and changes nothing; the bootstrap tenant's
// administrator (the bootstrap client) may manage them.
func TestKeypairsNeedBootstrapTenantAdmin(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	if h.cfg.BootstrapTenantID != tenantA {
		t.Fatalf("harness bootstrap tenant %q", h.cfg.BootstrapTenantID)
	}
	bootAdmin := h.clientToken(bootID, bootSecret) // ROLE_ADMIN in tenantA
	r := h.do("POST", "/oauth/keys/keypair", bootAdmin, strings.NewReader(`{"audience":"human"}`))
	if r.status != 200 {
		t.Fatalf("bootstrap admin issues: %d %s", r.status, r.body)
	}
	kid := r.json(t)["keyId"].(string)

	before := map[string]storage.Keypair{}
	for _, k := range []string{kid, h.kid} {
		kp, err := h.stores.Keypairs.GetKeypair(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		before[k] = *kp
	}
	adminB := h.mint(h.adminClaims(tenantB))
	userA := h.adminClaims(tenantA)
	userA["user_roles"] = []string{"ROLE_USER"}
	userA["jti"] = "j-user-a"
	notAdminA := h.mint(userA)
	// The other tenant's administrator is a real administrator elsewhere.
	if r := h.do("GET", "/clients", adminB, nil); r.status != 200 {
		t.Fatalf("tenant B admin on its own clients: %d %s", r.status, r.body)
	}
	ops := []struct{ method, path, body string }{
		{"GET", "/oauth/keys/keypair/current", ""},
		{"POST", "/oauth/keys/keypair", `{"audience":"client","invalidateCurrent":true,"invalidateGracePeriodSec":0}`},
		{"POST", "/oauth/keys/keypair/" + kid + "/invalidate", `{"gracePeriodSec":0}`},
		{"POST", "/oauth/keys/keypair/" + kid + "/reactivate", `{"validTo":"2999-01-01T00:00:00Z"}`},
		{"DELETE", "/oauth/keys/keypair/" + kid, ""},
		{"DELETE", "/oauth/keys/keypair/" + h.kid, ""},
	}
	for _, who := range []struct{ name, tok string }{{"tenant B admin", adminB}, {"tenant A non-admin", notAdminA}} {
		for _, op := range ops {
			var body io.Reader
			if op.body != "" {
				body = strings.NewReader(op.body)
			}
			r := h.do(op.method, op.path, who.tok, body)
			props, _ := r.json(t)["properties"].(map[string]any)
			if r.status != 403 || props["errorCode"] != "FORBIDDEN" {
				t.Errorf("%s %s %s: %d %s, want 403 FORBIDDEN", who.name, op.method, op.path, r.status, r.body)
			}
		}
	}
	// Nothing changed: both keypairs are stored as before, and the
	// bootstrap key is still the current one.
	for k, was := range before {
		kp, err := h.stores.Keypairs.GetKeypair(t.Context(), k)
		if err != nil || kp.Active != was.Active || !kp.ValidTo.Equal(was.ValidTo) {
			t.Fatalf("keypair %s after refused calls: %+v %v, was %+v", k, kp, err, was)
		}
	}
	if all, _ := h.stores.Keypairs.ListKeypairs(t.Context()); len(all) != len(before) {
		t.Fatalf("%d keypairs after refused calls, want %d", len(all), len(before))
	}
	if r := h.do("GET", "/oauth/keys/keypair/current", bootAdmin, nil); r.status != 200 || r.json(t)["keyId"] != h.kid {
		t.Fatalf("current after refused calls: %d %s", r.status, r.body)
	}
	// The bootstrap tenant's administrator manages them.
	if r := h.do("POST", "/oauth/keys/keypair/"+kid+"/invalidate", bootAdmin, strings.NewReader(`{"gracePeriodSec":0}`)); r.status != 200 {
		t.Fatalf("bootstrap admin invalidates: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/oauth/keys/keypair/"+kid, bootAdmin, nil); r.status != 200 {
		t.Fatalf("bootstrap admin deletes: %d %s", r.status, r.body)
	}
}
