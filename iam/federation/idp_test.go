package federation

import (
	"context"
	"crypto/rand"
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

	"svc/netguard"
	"svc/storage/memory"
)

// Real RSA keys, generated once per test binary (generation dominates
// test time otherwise).
var (
	keyPoolOnce sync.Once
	keyPool     []*rsa.PrivateKey
)

func testKey(t testing.TB, i int) *rsa.PrivateKey {
	keyPoolOnce.Do(func() {
		for range 5 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keyPool = append(keyPool, k)
		}
	})
	return keyPool[i%len(keyPool)]
}

// testIdP is a local OpenID provider over TLS: a discovery document and a
// JWKS whose key set can rotate. jwksGate, when set, holds JWKS requests
// until closed.
type testIdP struct {
	srv       *httptest.Server
	issuer    string
	mu        sync.Mutex
	keys      map[string]*rsa.PrivateKey
	jwksHits  atomic.Int64
	discHits  atomic.Int64
	jwksGate  chan struct{}
	redirect  string // discovery answers a redirect here when set
	discovery func() string
}

func newTestIdP(t testing.TB) *testIdP {
	idp := &testIdP{keys: map[string]*rsa.PrivateKey{"k1": testKey(t, 0)}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		idp.discHits.Add(1)
		if idp.redirect != "" {
			http.Redirect(w, r, idp.redirect, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if idp.discovery != nil {
			fmt.Fprint(w, idp.discovery())
			return
		}
		fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q,"id_token_signing_alg_values_supported":["RS256"]}`, idp.issuer, idp.srv.URL+"/jwks")
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		idp.jwksHits.Add(1)
		idp.mu.Lock()
		gate := idp.jwksGate
		idp.mu.Unlock()
		if gate != nil {
			<-gate
		}
		w.Header().Set("Content-Type", "application/jwk-set+json; charset=utf-8")
		w.Write(idp.jwksJSON())
	})
	idp.srv = httptest.NewTLSServer(mux)
	idp.issuer = idp.srv.URL + "/realms/test"
	t.Cleanup(idp.srv.Close)
	return idp
}

func (i *testIdP) wellKnown() string { return i.srv.URL + "/.well-known/openid-configuration" }

func (i *testIdP) jwksJSON() []byte {
	i.mu.Lock()
	defer i.mu.Unlock()
	b := []byte(`{"keys":[`)
	first := true
	for kid, k := range i.keys {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, jwkJSON(kid, &k.PublicKey)...)
	}
	return append(b, "]}"...)
}

func jwkJSON(kid string, pub *rsa.PublicKey) string {
	return fmt.Sprintf(`{"kty":"RSA","kid":%q,"use":"sig","alg":"RS256","n":%q,"e":%q}`, kid,
		base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
}

// rotate replaces the published key set with one new key.
func (i *testIdP) rotate(kid string, k *rsa.PrivateKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys = map[string]*rsa.PrivateKey{kid: k}
}

func (i *testIdP) key(kid string) *rsa.PrivateKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[kid]
}

func sign(t testing.TB, k *rsa.PrivateKey, kid string, c jwt.MapClaims) string {
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

// claims returns a valid federated claim set for the IdP.
func (i *testIdP) claims(sub string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": i.issuer, "sub": sub, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func (i *testIdP) token(t testing.TB, kid, sub string, extra jwt.MapClaims) string {
	return sign(t, i.key(kid), kid, i.claims(sub, extra))
}

func (i *testIdP) netOptions() netguard.Options {
	pool := x509.NewCertPool()
	pool.AddCert(i.srv.Certificate())
	return netguard.Options{AllowPrivate: true, RootCAs: pool,
		ConnectTimeout: 5 * time.Second, PoolTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second}
}

func newTestProviders(t testing.TB, idp *testIdP, mod func(*ProvidersConfig)) (*Providers, *memory.Providers) {
	t.Helper()
	store := memory.NewIAMStores().Providers.(*memory.Providers)
	cfg := ProvidersConfig{RolesClaim: "roles", RequireHTTPS: true, Net: idp.netOptions(), ReconcileInterval: time.Minute}
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
