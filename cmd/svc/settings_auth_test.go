package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"svc/internal/testkeys"
	"svc/platform/netguard/netguardtest"
)

// jwtEnv is jwt mode on the memory engine with the test signing key
// (testkeys 5, in a file of its own) and the bootstrap client
// boot/boot-secret in tenant, plus extra.
func jwtEnv(t *testing.T, tenant string, extra ...string) []string {
	t.Helper()
	keyFile := testkeys.File(t, 5)
	return append([]string{"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile, "SVC_STORAGE_BACKEND=memory",
		"SVC_BOOTSTRAP_CLIENT_ID=boot", "SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret", "SVC_BOOTSTRAP_TENANT_ID=" + tenant}, extra...)
}

// claimsOf decodes a JWT's payload without verifying it (the server did).
func claimsOf(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// validity is validTo - validFrom of a keypair or trusted-key view.
func validity(t *testing.T, what string, m map[string]any) time.Duration {
	t.Helper()
	from, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(m["validFrom"]))
	to, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(m["validTo"]))
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: validFrom/validTo: %v", what, m)
	}
	return to.Sub(from)
}

// TestAuthSettingsShapeTokensAndKeys runs jwt mode with non-default auth
// settings and reads each one back from what the service issues:
// SVC_JWT_ISSUER is the tokens' iss and the metadata's issuer,
// SVC_JWT_EXPIRY_SECONDS their lifetime and expires_in,
// SVC_BOOTSTRAP_USER_ID and SVC_BOOTSTRAP_ROLES the bootstrap client's
// caas_user_id and user_roles (a role list without ROLE_ADMIN loses the
// admin operations), SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS the validity of
// the bootstrap and an issued keypair, SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS
// that of a trusted key registered without validTo.
func TestAuthSettingsShapeTokensAndKeys(t *testing.T) {
	t.Parallel()
	const issuer, expiry = "https://issuer.example/svc", 777
	p := startJWTProc(t, jwtEnv(t, "default-tenant", "SVC_JWT_ISSUER="+issuer, fmt.Sprintf("SVC_JWT_EXPIRY_SECONDS=%d", expiry),
		"SVC_BOOTSTRAP_USER_ID=ops-7", "SVC_BOOTSTRAP_ROLES=ROLE_ADMIN,ROLE_AUDITOR",
		"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS=40", "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS=3",
		"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED=true"))

	st, tr := call(t, "POST", p.base+"/oauth/token", "Basic "+base64.StdEncoding.EncodeToString([]byte("boot:boot-secret")), "grant_type=client_credentials")
	if st != 200 || tr["expires_in"] != float64(expiry) {
		t.Fatalf("token: %d %v, want expires_in %d", st, tr, expiry)
	}
	tok := tr["access_token"].(string)
	c := claimsOf(t, tok)
	exp, _ := c["exp"].(float64)
	iat, _ := c["iat"].(float64)
	if exp-iat != expiry || c["iss"] != issuer || c["caas_user_id"] != "ops-7" {
		t.Errorf("claims: exp-iat=%v iss=%v caas_user_id=%v, want %d %s ops-7", exp-iat, c["iss"], c["caas_user_id"], expiry, issuer)
	}
	var roles []string
	for _, r := range c["user_roles"].([]any) {
		roles = append(roles, fmt.Sprint(r))
	}
	if !slices.Equal(roles, []string{"ROLE_ADMIN", "ROLE_AUDITOR"}) {
		t.Errorf("user_roles %v, want the configured ROLE_ADMIN, ROLE_AUDITOR", roles)
	}
	if st, md := call(t, "GET", p.base+"/.well-known/oauth-authorization-server", "", ""); st != 200 || md["issuer"] != issuer {
		t.Errorf("metadata: %d issuer %v, want %s", st, md["issuer"], issuer)
	}

	admin := "Bearer " + tok
	const days40 = 40 * 24 * time.Hour
	st, cur := call(t, "GET", p.base+"/oauth/keys/keypair/current", admin, "")
	if st != 200 {
		t.Fatalf("current keypair: %d %v", st, cur)
	}
	if v := validity(t, "bootstrap keypair", cur); v != days40 {
		t.Errorf("bootstrap keypair valid for %v, want 40 days", v)
	}
	st, kp := call(t, "POST", p.base+"/oauth/keys/keypair", admin, `{"audience":"human"}`)
	if st != 200 {
		t.Fatalf("issue keypair: %d %v", st, kp)
	}
	if v := validity(t, "issued keypair", kp); v != days40 {
		t.Errorf("issued keypair valid for %v, want 40 days", v)
	}

	partner := testkeys.RSA(6) // not the signing key
	jwk := fmt.Sprintf(`{"kty":"RSA","kid":"p1","n":%q,"e":%q}`, base64.RawURLEncoding.EncodeToString(partner.N.Bytes()),
		base64.RawURLEncoding.EncodeToString(big.NewInt(int64(partner.E)).Bytes()))
	st, tk := call(t, "POST", p.base+"/oauth/keys/trusted", admin, `{"keyId":"p1","audience":"client","jwk":`+jwk+`}`)
	if st != 200 {
		t.Fatalf("register trusted key: %d %v", st, tk)
	}
	if v := validity(t, "trusted key", tk); v != 3*24*time.Hour {
		t.Errorf("trusted key without validTo valid for %v, want 3 days", v)
	}

	// The same operation with a bootstrap client whose roles lack ROLE_ADMIN.
	q := startJWTProc(t, jwtEnv(t, "default-tenant", "SVC_BOOTSTRAP_ROLES=ROLE_M2M"))
	user := "Bearer " + tokenFor(t, q.base, "boot", "boot-secret")
	if st, body := call(t, "GET", q.base+"/oauth/keys/keypair/current", user, ""); st != 403 {
		t.Errorf("SVC_BOOTSTRAP_ROLES=ROLE_M2M: admin operation answered %d %v, want 403", st, body)
	}
}

// TestBootstrapAudienceHumanSignsNoMachineTokens: with
// SVC_JWT_BOOTSTRAP_AUDIENCE=human the bootstrap key is a human-audience
// key, and with no client-audience key the token endpoint cannot sign a
// machine token: 500 server_error (docs/decisions/0006-tokens-keypairs-clients.md), where the default
// (client) issues one.
func TestBootstrapAudienceHumanSignsNoMachineTokens(t *testing.T) {
	t.Parallel()
	p := startJWTProc(t, jwtEnv(t, "default-tenant", "SVC_JWT_BOOTSTRAP_AUDIENCE=human"))
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("boot:boot-secret"))
	if st, body := call(t, "POST", p.base+"/oauth/token", basic, "grant_type=client_credentials"); st != 500 || body["error"] != "server_error" {
		t.Fatalf("human bootstrap audience: token endpoint %d %v, want 500 server_error", st, body)
	}
	q := startJWTProc(t, jwtEnv(t, "default-tenant", "SVC_JWT_BOOTSTRAP_AUDIENCE=client"))
	tokenFor(t, q.base, "boot", "boot-secret")
}

// TestOIDCNetworkSettings registers OIDC providers on loopback under three
// configurations: SVC_OIDC_REQUIRE_HTTPS (default true) refuses an http
// URI; with it off, the SSRF blocklist refuses loopback unless
// SVC_OIDC_ALLOW_PRIVATE_NETWORKS is on; with both, discovery reaches the
// local servers and each fetch fails with the class of the timeout
// configured for its stage (SVC_OIDC_SOCKET_TIMEOUT_MS for a server that
// never answers, SVC_OIDC_CONNECT_TIMEOUT_MS for a connect that never
// completes), logged before registration answers. The connection-request
// timeout has no way to run out here (registration fetches one at a time);
// netguard.TestFetchTimeoutsNameTheirStage shows it.
func TestOIDCNetworkSettings(t *testing.T) {
	t.Parallel()
	const tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"
	silent := netguardtest.NewSilent(t)
	stalled := "http://" + netguardtest.StalledConnect(t)
	register := func(p *jwtProc, admin, uri string) (int, map[string]any) {
		t.Helper()
		return call(t, "POST", p.base+"/oauth/oidc/providers", admin,
			fmt.Sprintf(`{"wellKnownConfigUri":%q,"expectedAudiences":["svc-%d"]}`, uri, time.Now().UnixNano()))
	}
	disc := "/.well-known/openid-configuration"

	def := startJWTProc(t, jwtEnv(t, tenant))
	admin := "Bearer " + tokenFor(t, def.base, "boot", "boot-secret")
	if st, body := register(def, admin, silent.URL+disc); st != 400 || !strings.Contains(fmt.Sprint(body), "SVC_OIDC_REQUIRE_HTTPS") {
		t.Errorf("default settings, http URI: %d %v, want 400 https required", st, body)
	}

	plain := startJWTProc(t, jwtEnv(t, tenant, "SVC_OIDC_REQUIRE_HTTPS=false"))
	admin = "Bearer " + tokenFor(t, plain.base, "boot", "boot-secret")
	if st, body := register(plain, admin, silent.URL+disc); st != 400 || !strings.Contains(fmt.Sprint(body), "OIDC_SSRF_BLOCKED") {
		t.Errorf("https not required, private networks blocked: %d %v, want 400 OIDC_SSRF_BLOCKED", st, body)
	}

	open := startJWTProc(t, jwtEnv(t, tenant, "SVC_OIDC_REQUIRE_HTTPS=false", "SVC_OIDC_ALLOW_PRIVATE_NETWORKS=true",
		"SVC_OIDC_SOCKET_TIMEOUT_MS=300", "SVC_OIDC_CONNECT_TIMEOUT_MS=300", "SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS=300"))
	admin = "Bearer " + tokenFor(t, open.base, "boot", "boot-secret")
	if st, body := register(open, admin, silent.URL+disc); st != 200 {
		t.Fatalf("private network allowed: %d %v, want 200 (pending provider)", st, body)
	}
	select {
	case <-silent.Arrived:
	default:
		t.Error("the silent server saw no discovery request")
	}
	if !open.stdout.waitFor("timed out awaiting the response") {
		t.Errorf("no read-timeout class in the discovery failure log:\n%s", open.stdout.String())
	}
	if st, body := register(open, admin, stalled+disc); st != 200 {
		t.Fatalf("stalled connect: %d %v, want 200 (pending provider)", st, body)
	}
	if !open.stdout.waitFor("connect timed out") {
		t.Errorf("no connect-timeout class in the discovery failure log:\n%s", open.stdout.String())
	}
}
