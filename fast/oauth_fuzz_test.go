package fast

import (
	"net/url"
	"testing"

	"github.com/valyala/fasthttp"
)

// FuzzClientCredentials: the token endpoints' credential reader never
// panics; what it accepts comes from exactly one method (the Basic header,
// or the body fields), and a refusal is a 400 or 401 with an OAuth code.
func FuzzClientCredentials(f *testing.F) {
	f.Add("Basic "+b64("id:secret"), "grant_type=client_credentials", "")
	f.Add("", "client_id=id&client_secret=s", "")
	f.Add("Basic "+b64("id:secret"), "client_secret=s", "")
	f.Add("", "client_id=id", "client_secret=x")
	f.Add("Bearer a.b.c", "", "")
	f.Add("basic !!!", "client_id=&client_secret=", "")
	f.Fuzz(func(t *testing.T, auth, body, query string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/oauth/token?" + query)
		ctx.Request.Header.SetContentType(formCT)
		if auth != "" {
			ctx.Request.Header.Set("Authorization", auth)
		}
		ctx.Request.SetBodyString(body)
		id, secret, cerr := presentedCredentials(&ctx)
		if cerr != nil {
			if (cerr.status != 400 && cerr.status != 401) || cerr.code == "" || cerr.desc == "" {
				t.Fatalf("refusal %+v", cerr)
			}
			return
		}
		if h := ctx.Request.Header.Peek("Authorization"); len(h) > 0 && isBasicScheme(h) {
			bid, bsecret, ok := basicCredentials(h)
			if !ok || bid != id || bsecret != secret {
				t.Fatalf("accepted %q:%q, the header says %q:%q (%v)", id, secret, bid, bsecret, ok)
			}
			return
		}
		form, err := url.ParseQuery(body)
		if err == nil && (form.Get("client_id") != id || form.Get("client_secret") != secret) {
			t.Fatalf("accepted %q:%q from body %q", id, secret, body)
		}
	})
}

// FuzzPayloadClaims: introspection's claim reader takes any string
// without panicking.
func FuzzPayloadClaims(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4IiwiZXhwIjoxLCJhdWQiOlsiYSJdfQ.sig")
	f.Add("a.b.c")
	f.Add("..")
	f.Add("x.eyJleHAiOiJub3QgYSBudW1iZXIifQ.y")
	f.Fuzz(func(t *testing.T, tok string) {
		c := payloadClaims(tok)
		_ = c.audience()
		appendNumber(nil, "exp", c.Exp)
	})
}
