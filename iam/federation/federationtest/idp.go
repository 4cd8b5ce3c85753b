// Package federationtest provides a real local OpenID provider for tests:
// an httptest TLS server with a discovery document and a rotating JWKS,
// signing RS256 tokens with real RSA keys.
package federationtest

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/internal/testkeys"
	"svc/platform/netguard"
)

// Key returns the i-th of five fixed RSA-2048 keys (testkeys 0-4; a
// generation would cost seconds of CPU per test binary under -race). Tests
// that need a key distinct from every IdP key take testkeys.RSA(5) and up.
func Key(i int) *rsa.PrivateKey {
	return testkeys.RSA(i % 5)
}

// IdP is a local OpenID provider over TLS.
type IdP struct {
	Srv      *httptest.Server
	Issuer   string
	JWKSHits atomic.Int64
	DiscHits atomic.Int64
	// Redirect, when set, makes discovery answer 302 to it.
	Redirect string
	// Discovery, when set, replaces the discovery body.
	Discovery func() string

	mu       sync.Mutex
	keys     map[string]*rsa.PrivateKey
	jwksGate chan struct{}
}

// NewIdP starts a provider publishing key "k1" (Key(0)).
func NewIdP(t testing.TB) *IdP {
	idp := &IdP{keys: map[string]*rsa.PrivateKey{"k1": Key(0)}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		idp.DiscHits.Add(1)
		if idp.Redirect != "" {
			http.Redirect(w, r, idp.Redirect, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if idp.Discovery != nil {
			fmt.Fprint(w, idp.Discovery())
			return
		}
		fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q,"id_token_signing_alg_values_supported":["RS256"]}`, idp.Issuer, idp.Srv.URL+"/jwks")
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		idp.JWKSHits.Add(1)
		idp.mu.Lock()
		gate := idp.jwksGate
		idp.mu.Unlock()
		if gate != nil {
			<-gate
		}
		w.Header().Set("Content-Type", "application/jwk-set+json; charset=utf-8")
		w.Write(idp.jwksJSON())
	})
	idp.Srv = httptest.NewTLSServer(mux)
	idp.Issuer = idp.Srv.URL + "/realms/test"
	t.Cleanup(idp.Srv.Close)
	return idp
}

// WellKnown is the discovery URL.
func (i *IdP) WellKnown() string { return i.Srv.URL + "/.well-known/openid-configuration" }

// GateJWKS holds JWKS requests until the returned channel is closed.
func (i *IdP) GateJWKS() chan struct{} {
	g := make(chan struct{})
	i.mu.Lock()
	i.jwksGate = g
	i.mu.Unlock()
	return g
}

func (i *IdP) jwksJSON() []byte {
	i.mu.Lock()
	defer i.mu.Unlock()
	b := []byte(`{"keys":[`)
	first := true
	for kid, k := range i.keys {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, JWK(kid, &k.PublicKey)...)
	}
	return append(b, "]}"...)
}

// JWK is the public JWK of pub under kid.
func JWK(kid string, pub *rsa.PublicKey) string {
	return fmt.Sprintf(`{"kty":"RSA","kid":%q,"use":"sig","alg":"RS256","n":%q,"e":%q}`, kid,
		base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
}

// Rotate replaces the published key set with one new key.
func (i *IdP) Rotate(kid string, k *rsa.PrivateKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys = map[string]*rsa.PrivateKey{kid: k}
}

// PrivateKey returns the published key of kid.
func (i *IdP) PrivateKey(kid string) *rsa.PrivateKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[kid]
}

// Sign signs c with k under kid (RS256).
func Sign(t testing.TB, k *rsa.PrivateKey, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Claims is a valid federated claim set; a nil value in extra removes
// that claim.
func (i *IdP) Claims(sub string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": i.Issuer, "sub": sub, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// Token is a token of the provider signed with its key kid.
func (i *IdP) Token(t testing.TB, kid, sub string, extra jwt.MapClaims) string {
	return Sign(t, i.PrivateKey(kid), kid, i.Claims(sub, extra))
}

// NetOptions trust the server's certificate and allow loopback (which is
// where it listens): the test-only settings.
func (i *IdP) NetOptions() netguard.Options {
	pool := x509.NewCertPool()
	pool.AddCert(i.Srv.Certificate())
	return netguard.Options{AllowPrivate: true, RootCAs: pool,
		ConnectTimeout: 5 * time.Second, PoolTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second}
}
