package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"svc/internal/await"
	"svc/internal/testkeys"
)

func postForm(t *testing.T, u, id, secret string, form url.Values) int {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRevocationAcrossNodesAndRestartOnPostgres: two processes share one
// database. A token revoked on node A is refused by A at once, by B once
// B's reconcile tick reads iam_revoked_token (B had the token in its
// verification cache), and by A again after A restarts.
func TestRevocationAcrossNodesAndRestartOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := scratchDatabase(t)
	keyFile := testkeys.File(t, 5)
	env := []string{"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile, "SVC_BOOTSTRAP_CLIENT_ID=boot",
		"SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret", "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL=" + dbURL,
		"SVC_AUTH_CACHE_RECONCILE_INTERVAL=1s"}
	a := startJWTProc(t, env)
	b := startJWTProc(t, env)
	tok := tokenFor(t, a.base, "boot", "boot-secret")
	bearer := "Bearer " + tok
	for _, n := range []*jwtProc{a, b} {
		if st, _ := call(t, "GET", n.base+"/account", bearer, ""); st != 200 {
			t.Fatalf("before revocation: %d", st)
		}
	}
	if st := postForm(t, a.base+"/oauth/revoke", "boot", "boot-secret", url.Values{"token": {tok}}); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if st, _ := call(t, "GET", a.base+"/account", bearer, ""); st != 401 {
		t.Fatalf("revoking node: %d", st)
	}
	// B follows within a reconcile interval (1 s here, ±10 %); the bound
	// is generous for a loaded machine.
	await.Value(t, 60*time.Second, func() (int, bool) {
		st, _ := call(t, "GET", b.base+"/account", bearer, "")
		return st, st == 401
	}, "node B refuses the revoked token (401)")
	a.stop(t)
	c := startJWTProc(t, env)
	if st, _ := call(t, "GET", c.base+"/account", bearer, ""); st != 401 {
		t.Fatalf("after restart: %d", st)
	}
	if st, _ := call(t, "GET", c.base+"/account", "Bearer "+tokenFor(t, c.base, "boot", "boot-secret"), ""); st != 200 {
		t.Fatalf("a fresh token after restart: %d", st)
	}
}
