package fast

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkTokenEndpoint issues client_credentials tokens to the bootstrap
// client (an operator-chosen secret) through the whole handler chain: after
// the first request its secret is answered from the verified-secret cache,
// so the figure is RSA signing plus the cache, not Argon2id.
func BenchmarkTokenEndpoint(b *testing.B) {
	hr := newJWTHarness(b)
	h := hr.srv.Handler()
	auth := []byte(basic(bootID, bootSecret))
	form := []byte("grant_type=client_credentials")
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/api/oauth/token")
		ctx.Request.Header.SetHost("svc.test")
		ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
		ctx.Request.Header.SetBytesV("Authorization", auth)
		ctx.Request.SetBody(form)
		h(&ctx)
		ctx.ResetUserValues()
		if st := ctx.Response.StatusCode(); st != 200 {
			b.Fatalf("status %d: %s", st, ctx.Response.Body())
		}
	}
}
