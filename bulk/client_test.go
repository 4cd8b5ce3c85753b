package bulk

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckAuthNamesTheFlags (issue 26): a jwt-mode svc refusing the
// import's missing or bad credentials is reported once, before any batch,
// with the flag to use.
func TestCheckAuthNamesTheFlags(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/oauth/token":
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"invalid_client","error_description":"bad client"}`))
		case r.Header.Get("Authorization") == "Bearer good":
			w.Write([]byte(`{}`))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(401)
			w.Write([]byte(`{"status":401,"detail":"missing token"}`))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		c    *Client
		want string // "" for success
	}{
		{&Client{}, "--token (or SVC_CLI_TOKEN), or --client-id and --client-secret"},
		{&Client{Token: "stale"}, "refused the token of --token / SVC_CLI_TOKEN"},
		{&Client{ClientID: "c", ClientSecret: "s"}, "did not issue a token for --client-id c"},
		{&Client{Token: "good"}, ""},
	} {
		tc.c.URL = srv.URL + "/api"
		err := tc.c.CheckAuth(context.Background())
		if tc.want == "" {
			if err != nil {
				t.Errorf("token %q: %v", tc.c.Token, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("token %q client %q: %v, want it to say %q", tc.c.Token, tc.c.ClientID, err, tc.want)
		}
	}
}
