package fast

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// benchAuthGet drives GET /api/model/ (501 on this branch in both modes, so
// the handler is identical) through the whole chain; the difference between
// the mock and jwt runs is the cost of authentication.
func benchAuthGet(b *testing.B, s *Server, bearer string) {
	var ctx fasthttp.RequestCtx
	h := s.Handler()
	auth := []byte("Bearer " + bearer)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/api/model/")
		ctx.Request.Header.SetHost("svc.test")
		if bearer != "" {
			ctx.Request.Header.SetBytesV("Authorization", auth)
		}
		h(&ctx)
		ctx.ResetUserValues()
		if st := ctx.Response.StatusCode(); st == 401 || st == 403 {
			b.Fatalf("status %d", st)
		}
	}
}

func BenchmarkAuthGetMock(b *testing.B) { benchAuthGet(b, newTestServer(b), "") }

func BenchmarkAuthGetJWT(b *testing.B) {
	h := newJWTHarness(b)
	benchAuthGet(b, h.srv, h.clientToken(bootID, bootSecret))
}
