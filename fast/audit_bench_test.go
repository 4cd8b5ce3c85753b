package fast

import (
	"testing"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/audit"
	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
)

// BenchmarkAuditList: GET the first page (20) of an entity's trail of 30
// events (a create and nine updates), driven through the handler.
func BenchmarkAuditList(b *testing.B) {
	for _, engine := range benchEngines {
		b.Run(engine, func(b *testing.B) {
			var ms storage.Models
			var es storage.Entities
			var as storage.Audits
			switch engine {
			case "postgres":
				db := newEntityPostgres(b)
				ms, es, as = db.Models(), db.Entities(), db.Audits()
			case "sqlite":
				db := sqlitetest.Open(b)
				ms, es, as = db.Models(), db.Entities(), db.Audits()
			default:
				m := memory.NewEntities()
				ms, es, as = memory.NewModels(), m, m.Audits()
			}
			msvc := model.New(ms, nil)
			esvc := entity.New(es, ms, entity.GateOf(msvc))
			cfg := config.Defaults()
			cfg.Validate()
			s, err := New(cfg, Deps{Auth: MockAuth{P: iam.MockPrincipal("user", nil)}, Model: msvc, Entities: esvc, Audit: audit.New(as, es)})
			if err != nil {
				b.Fatal(err)
			}
			doc := entityDoc1K(0)
			benchDo(s, "POST", "/api/model/import/JSON/SAMPLE_DATA/bench/1", []byte(doc))
			benchDo(s, "PUT", "/api/model/bench/1/lock", nil)
			st, out := benchDo(s, "POST", "/api/entity/JSON/bench/1", []byte(doc))
			var res []txResult
			if err := json.Unmarshal(out, &res); st != 200 || err != nil || len(res) != 1 {
				b.Fatalf("create: %d %s", st, out)
			}
			id := res[0].EntityIDs[0]
			for i := 0; i < 9; i++ {
				if st, out := benchDo(s, "PUT", "/api/entity/JSON/"+id, []byte(doc)); st != 200 {
					b.Fatalf("update: %d %s", st, out)
				}
			}
			uri := "/api/audit/entity/" + id
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
