package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/internal/testkeys"

	"github.com/golang-jwt/jwt/v5"
	"svc/storage/pgtest"
)

// fedTempDatabase creates a uniquely named database and drops it after t.
func fedTempDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.New(t, "cmd_fed")
}

// TestFederationSurvivesRestartOnPostgres runs the real binary in jwt mode
// on PostgreSQL: a trusted key and an OIDC provider registered before a
// restart are there after it, and the key still authenticates.
func TestFederationSurvivesRestartOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := fedTempDatabase(t)
	bin := svcBinary(t)
	keyFile := testkeys.File(t, 5)
	tenant := "0f8fad5b-d9cb-469f-a165-70867728950e"
	httpPort, adminPort := freePort(t), freePort(t)
	env := cleanEnv(t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)),
		"SVC_SUPPRESS_BANNER=true", "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+dbURL,
		"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE="+keyFile,
		"SVC_BOOTSTRAP_CLIENT_ID=boot", "SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret", "SVC_BOOTSTRAP_TENANT_ID="+tenant,
		"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED=true",
		// The provider below is unreachable on purpose (registration must
		// succeed with the IdP down); the flag skips the registration-time
		// DNS check that would refuse an unresolvable host.
		"SVC_OIDC_ALLOW_PRIVATE_NETWORKS=true")
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve")
		cmd.Dir = t.TempDir()
		cmd.Env = env
		var stderr syncBuffer
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		waitReady(t, adminPort)
		return cmd
	}
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	call := func(method, path, bearer, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	clientToken := func() string {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("boot", "boot-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tr struct {
			AccessToken string `json:"access_token"`
		}
		json.NewDecoder(resp.Body).Decode(&tr)
		if resp.StatusCode != 200 || tr.AccessToken == "" {
			t.Fatalf("token: %d", resp.StatusCode)
		}
		return tr.AccessToken
	}

	partner := testkeys.RSA(6) // not the signing key
	jwk := fmt.Sprintf(`{"kty":"RSA","kid":"p1","n":%q,"e":%q}`, base64.RawURLEncoding.EncodeToString(partner.N.Bytes()),
		base64.RawURLEncoding.EncodeToString(big.NewInt(int64(partner.E)).Bytes()))

	first := start()
	admin := clientToken()
	if st, b := call("POST", "/oauth/keys/trusted", admin, `{"keyId":"p1","jwk":`+jwk+`}`); st != 200 {
		t.Fatalf("register trusted key: %d %s", st, b)
	}
	if st, b := call("POST", "/oauth/oidc/providers", admin, `{"wellKnownConfigUri":"https://idp.invalid/.well-known/openid-configuration","expectedAudiences":["svc"]}`); st != 200 {
		t.Fatalf("register provider: %d %s", st, b)
	}
	first.Process.Signal(syscall.SIGTERM)
	first.Wait()

	start()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": "svc", "sub": "ops", "caas_org_id": tenant,
		"user_roles": []string{"ROLE_ADMIN"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	tok.Header["kid"] = "p1"
	trusted, _ := tok.SignedString(partner)
	if st, b := call("GET", "/oauth/keys/trusted", trusted, ""); st != 200 || !strings.Contains(b, `"keyId":"p1"`) {
		t.Fatalf("trusted key after restart: %d %s", st, b)
	}
	if st, b := call("GET", "/oauth/oidc/providers", trusted, ""); st != 200 || !strings.Contains(b, "idp.invalid") {
		t.Fatalf("provider after restart: %d %s", st, b)
	}
}
