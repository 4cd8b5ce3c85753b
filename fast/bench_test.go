package fast

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// benchRequest drives the full middleware chain with one reused context, as
// fasthttp's server does per connection.
func benchRequest(b *testing.B, s *Server, method, uri string) {
	var ctx fasthttp.RequestCtx
	h := s.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.SetHost("svc.test")
		h(&ctx)
		ctx.ResetUserValues()
		if ctx.Response.StatusCode() >= 500 && ctx.Response.StatusCode() != 501 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}

func BenchmarkHelpTopic(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/api/help/cli")
}

func BenchmarkHelpIndex(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/api/help")
}

func BenchmarkHealth(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/api/health")
}

func BenchmarkNotImplemented(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/api/account")
}

func BenchmarkOpenAPI(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/openapi.json")
}

// TestHelpTopicAllocations pins the budget: the mock-auth help
// path allocates at most 2 objects per request.
func TestHelpTopicAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count is stable but needs a warm-up")
	}
	s := newTestServer(t)
	h := s.Handler()
	var ctx fasthttp.RequestCtx
	run := func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/api/help/cli")
		h(&ctx)
		ctx.ResetUserValues()
	}
	run()
	if allocs := testing.AllocsPerRun(200, run); allocs > 2 {
		t.Errorf("GET /api/help/cli allocates %.1f objects per request, budget 2", allocs)
	}
}

func BenchmarkDocsPage(b *testing.B) {
	benchRequest(b, newTestServer(b), "GET", "/docs")
}

// BenchmarkDocsAssetGzip is the Swagger UI bundle as browsers fetch it:
// the embedded gzip bytes, not copied.
func BenchmarkDocsAssetGzip(b *testing.B) {
	s := newTestServer(b)
	var ctx fasthttp.RequestCtx
	h := s.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/docs/swagger-ui-bundle.js")
		ctx.Request.Header.SetHost("svc.test")
		ctx.Request.Header.Set("Accept-Encoding", "gzip")
		h(&ctx)
		ctx.ResetUserValues()
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}
