package fast

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/model"
	"svc/platform/config"
	"svc/storage/memory"
)

func benchModelServer(b *testing.B) *Server {
	b.Helper()
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	s, err := New(cfg, Deps{Model: model.New(memory.NewModels(), nil)})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchDoc is a ~1 KB document: 20 scalar fields, a nested object and an
// array of objects.
func benchDoc() []byte {
	var sb strings.Builder
	sb.WriteString(`{`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&sb, `"field%02d":"value number %d",`, i, i)
	}
	sb.WriteString(`"n":12345,"ok":true,"at":"2024-06-20T10:15:30Z","addr":{"city":"Zurich","zip":"8000"},`)
	sb.WriteString(`"items":[{"sku":"A-1","qty":2,"price":9.95},{"sku":"B-2","qty":1,"price":19.5}]}`)
	return []byte(sb.String())
}

func benchModelRequest(b *testing.B, s *Server, method, uri string, body []byte) {
	var ctx fasthttp.RequestCtx
	h := s.Handler()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.SetHost("svc.test")
		if body != nil {
			ctx.Request.SetBodyRaw(body)
		}
		h(&ctx)
		ctx.ResetUserValues()
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}

func seedBenchModel(b *testing.B, s *Server) {
	b.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/api/model/import/JSON/SAMPLE_DATA/bench/1")
	ctx.Request.SetBody(benchDoc())
	s.Handler()(&ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("seed: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

// BenchmarkModelExportSimpleView: GET export of a 1 KB document's model
// (stored SIMPLE_VIEW bytes written into the envelope).
func BenchmarkModelExportSimpleView(b *testing.B) {
	s := benchModelServer(b)
	seedBenchModel(b, s)
	benchModelRequest(b, s, "GET", "/api/model/export/SIMPLE_VIEW/bench/1", nil)
}

func BenchmarkModelExportJSONSchema(b *testing.B) {
	s := benchModelServer(b)
	seedBenchModel(b, s)
	benchModelRequest(b, s, "GET", "/api/model/export/JSON_SCHEMA/bench/1", nil)
}

// BenchmarkModelImportSampleData: re-import of a 1 KB sample into a model
// that already holds its shape (inference, merge, no write).
func BenchmarkModelImportSampleData(b *testing.B) {
	s := benchModelServer(b)
	seedBenchModel(b, s)
	benchModelRequest(b, s, "POST", "/api/model/import/JSON/SAMPLE_DATA/bench/1", benchDoc())
}

// BenchmarkModelImportSimpleView: import of a model's own export.
func BenchmarkModelImportSimpleView(b *testing.B) {
	s := benchModelServer(b)
	seedBenchModel(b, s)
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.SetRequestURI("/api/model/export/SIMPLE_VIEW/bench/1")
	s.Handler()(&ctx)
	export := append([]byte(nil), ctx.Response.Body()...)
	benchModelRequest(b, s, "POST", "/api/model/import/JSON/SIMPLE_VIEW/bench/1", export)
}
