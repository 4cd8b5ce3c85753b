package fast

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"svc/iam"
)

// TestTokenRequestAsTemplatesSendIt (docs/decisions/0005-token-endpoint.md, docs/decisions/0030-client-compatibility.md): the Java templates' Spring client sends client_secret_basic
// with URL-encoded id and secret, scope=ROLE_M2M and an Accept with a
// charset; Authlib (the Python templates) quotes them the same way and
// sends no scope. Both get a Bearer token as application/json with
// expires_in, whose claims carry sub, iss, caas_org_id and ROLE_M2M.
func TestTokenRequestAsTemplatesSendIt(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	const id, secret = "ops@example.com+1", "s3cr+t/with=signs&more"
	if err := iam.NewClients(h.stores.Clients, false).EnsureBootstrap(context.Background(), id, secret, tenantA, "ops", []string{iam.RoleM2M}); err != nil {
		t.Fatal(err)
	}
	// Java's URLEncoder and Python's quote(safe='') agree on these
	// characters: every reserved one is percent-encoded.
	enc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(enc(id)+":"+enc(secret)))
	for name, form := range map[string]string{
		"spring":  "grant_type=client_credentials&scope=ROLE_M2M",
		"authlib": "grant_type=client_credentials",
	} {
		t.Run(name, func(t *testing.T) {
			r := h.do("POST", "/oauth/token", "", strings.NewReader(form), "Authorization", auth,
				"Content-Type", "application/x-www-form-urlencoded;charset=UTF-8", "Accept", "application/json;charset=UTF-8")
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			body := r.json(t)
			tok, _ := body["access_token"].(string)
			if tok == "" || body["token_type"] != "Bearer" || body["expires_in"] == nil {
				t.Fatalf("token response %v", body)
			}
			_, c := claimsOf(t, tok)
			roles, _ := c["user_roles"].([]any)
			if c["sub"] != id || c["iss"] != h.cfg.JWTIssuer || c["caas_org_id"] != tenantA || len(roles) == 0 || roles[0] != iam.RoleM2M {
				t.Fatalf("claims %v", c)
			}
		})
	}
	// Without the unescaping the raw encoded form would be the id.
	raw := "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	if r := h.do("POST", "/oauth/token", "", strings.NewReader("grant_type=client_credentials"), "Authorization", raw,
		"Content-Type", "application/x-www-form-urlencoded"); r.status != 401 {
		t.Fatalf("unencoded '+' in the credentials must read as a space: %d %s", r.status, r.body)
	}
}
