package fast

import (
	"time"

	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/modelcache"
	"svc/storage/sqlite/sqlitetest"
)

// entityDoc1K is a ~1 KB entity document.
func entityDoc1K(i int) string {
	return fmt.Sprintf(`{"id":%d,"name":"customer-%d","email":"c%d@example.com","active":true,"score":%d.5,`+
		`"address":{"street":"%s","city":"Springfield","zip":"12345","country":"US"},`+
		`"tags":["alpha","beta","gamma"],"orders":[{"sku":"A-1","qty":2,"price":9.99},{"sku":"B-2","qty":1,"price":19.5}],`+
		`"notes":"%s"}`, i, i, i, i, strings.Repeat("x", 120), strings.Repeat("lorem ipsum ", 54))
}

// benchEntityServer is a server over engine driven through its handler,
// with a locked model "bench"/1.
func benchEntityServer(b *testing.B, engine string) *Server {
	b.Helper()
	var ms storage.Models
	var es storage.Entities
	switch engine {
	case "postgres":
		db := newEntityPostgres(b)
		// Models cached as cmd/svc serves them.
		ms, es = modelcache.New(db.Models(), 5*time.Minute), db.Entities()
	case "sqlite":
		db := sqlitetest.Open(b)
		ms, es = modelcache.New(db.Models(), 5*time.Minute), db.Entities()
	default:
		ms, es = memory.NewModels(), memory.NewEntities()
	}
	msvc := model.New(ms, nil)
	esvc := entity.New(es, ms, entity.GateOf(msvc))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	cfg.Validate()
	s, err := New(cfg, Deps{Auth: MockAuth{P: iam.MockPrincipal("user", nil)}, Model: msvc, Entities: esvc})
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []struct{ m, u, body string }{
		{"POST", "/api/model/import/JSON/SAMPLE_DATA/bench/1", entityDoc1K(0)},
		{"PUT", "/api/model/bench/1/lock", ""},
	} {
		if st, body := benchDo(s, r.m, r.u, []byte(r.body)); st != 200 {
			b.Fatalf("%s %s: %d %s", r.m, r.u, st, body)
		}
	}
	return s
}

func benchDo(s *Server, method, uri string, body []byte) (int, []byte) {
	var ctx fasthttp.RequestCtx
	// Init gives the context a (fake) server, which its Done/Err need.
	ctx.Init(&fasthttp.Request{}, nil, nil)
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.SetBody(body)
	s.Handler()(&ctx)
	return ctx.Response.StatusCode(), ctx.Response.Body()
}

var benchEngines = []string{"memory", "postgres", "sqlite"}

// BenchmarkEntityCreate: POST one 1 KB entity per request.
func BenchmarkEntityCreate(b *testing.B) {
	for _, engine := range benchEngines {
		b.Run(engine, func(b *testing.B) {
			s := benchEntityServer(b, engine)
			doc := []byte(entityDoc1K(1))
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var ctx fasthttp.RequestCtx
				ctx.Init(&fasthttp.Request{}, nil, nil)
				for pb.Next() {
					ctx.Request.Reset()
					ctx.Response.Reset()
					ctx.Request.Header.SetMethod("POST")
					ctx.Request.SetRequestURI("/api/entity/JSON/bench/1")
					ctx.Request.SetBody(doc)
					s.Handler()(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
					}
				}
			})
		})
	}
}

// BenchmarkEntityCollectionCreate: POST 1000 entities of 1 KB in one
// request, window 1000 (one transaction). Reports entities/s.
func BenchmarkEntityCollectionCreate(b *testing.B) {
	for _, engine := range benchEngines {
		b.Run(engine, func(b *testing.B) {
			s := benchEntityServer(b, engine)
			docs := make([]string, 1000)
			for i := range docs {
				docs[i] = entityDoc1K(i)
			}
			body := []byte("[" + strings.Join(docs, ",") + "]")
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if st, out := benchDo(s, "POST", "/api/entity/JSON/bench/1?transactionWindow=1000", body); st != 200 {
					b.Fatalf("%d %s", st, out)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkEntityGet: GET one entity by id (latest revision).
func BenchmarkEntityGet(b *testing.B) {
	for _, engine := range benchEngines {
		b.Run(engine, func(b *testing.B) {
			s := benchEntityServer(b, engine)
			st, out := benchDo(s, "POST", "/api/entity/JSON/bench/1", []byte(entityDoc1K(2)))
			if st != 200 {
				b.Fatalf("%d %s", st, out)
			}
			var res []struct {
				EntityIDs []string `json:"entityIds"`
			}
			json.Unmarshal(out, &res)
			uri := "/api/entity/" + res[0].EntityIDs[0]
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var ctx fasthttp.RequestCtx
				ctx.Init(&fasthttp.Request{}, nil, nil)
				for pb.Next() {
					ctx.Request.Reset()
					ctx.Response.Reset()
					ctx.Request.Header.SetMethod("GET")
					ctx.Request.SetRequestURI(uri)
					s.Handler()(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
					}
				}
			})
		})
	}
}
