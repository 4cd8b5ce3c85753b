package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jwtLikeServer answers like svc in jwt mode: /oauth/token issues a token
// for the right Basic credentials, every other call without that bearer
// token is refused with 401.
func jwtLikeServer(t *testing.T) (url string, refused, tokens *atomic.Int64, seen *sync.Map) {
	refused, tokens, seen = new(atomic.Int64), new(atomic.Int64), new(sync.Map)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/oauth/token" {
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte("lg:secret"))
			if r.Header.Get("Authorization") != want {
				refused.Add(1)
				w.WriteHeader(401)
				return
			}
			tokens.Add(1)
			w.Write([]byte(`{"access_token":"tok-1","token_type":"Bearer"}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			refused.Add(1)
			w.WriteHeader(401)
			return
		}
		seen.Store(r.Method+" "+r.URL.Path, true)
		if r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/api/entity/") {
			w.Write([]byte(`[{"transactionId":"t","entityIds":["e1"]}]`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api", refused, tokens, seen
}

// TestScenariosCarryTokenInJWTMode: with client credentials, every call of
// a scenario — its setup's imports, lock and fixture create as much as the
// measured requests — carries the bearer token fetched once before the
// setup, so none is refused by a server in jwt mode.
func TestScenariosCarryTokenInJWTMode(t *testing.T) {
	for _, name := range []string{"order-create", "order-get", "order-collection", "order-export", "model-list", "create", "get", "collection", "model-export", "authget"} {
		t.Run(name, func(t *testing.T) {
			base, refused, tokens, seen := jwtLikeServer(t)
			res, err := Run(Options{Base: base, Concurrency: 2, Duration: 30 * time.Second, MaxRequests: 6,
				ClientID: "lg", ClientSecret: "secret"}, scenarios[name])
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 || refused.Load() != 0 || tokens.Load() != 1 {
				t.Fatalf("%s; %d refused, %d tokens issued", res, refused.Load(), tokens.Load())
			}
			n := 0
			seen.Range(func(any, any) bool { n++; return true })
			if n == 0 {
				t.Fatal("no call reached the server")
			}
		})
	}
}

// TestTokenScenarioKeepsBasicCredentials: the token scenario's requests
// carry the client's Basic credentials, not the run's bearer token.
func TestTokenScenarioKeepsBasicCredentials(t *testing.T) {
	base, refused, tokens, _ := jwtLikeServer(t)
	res, err := Run(Options{Base: base, Concurrency: 2, Duration: 30 * time.Second, MaxRequests: 5,
		ClientID: "lg", ClientSecret: "secret"}, scenarios["token"])
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || refused.Load() != 0 || tokens.Load() != 6 {
		t.Fatalf("%s; %d refused, %d tokens issued (want 1 + 5)", res, refused.Load(), tokens.Load())
	}
}

// TestNoCredentialsNoToken: without credentials (mock mode) calls go
// without an Authorization header and a jwt-mode server refuses them, as
// before; a given -token is used as is.
func TestNoCredentialsNoToken(t *testing.T) {
	base, refused, tokens, _ := jwtLikeServer(t)
	if _, err := Run(Options{Base: base, Concurrency: 1, Duration: 30 * time.Second, MaxRequests: 2}, scenarios["order-create"]); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("setup without a token: %v", err)
	}
	refused.Store(0)
	res, err := Run(Options{Base: base, Concurrency: 1, Duration: 30 * time.Second, MaxRequests: 3, Token: "tok-1"}, scenarios["order-create"])
	if err != nil || res.Errors != 0 || refused.Load() != 0 || tokens.Load() != 0 {
		t.Fatalf("%s %v; %d refused, %d tokens", res, err, refused.Load(), tokens.Load())
	}
}
