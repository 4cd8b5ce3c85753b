package fast

import (
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/storage/memory"
	"svc/workflow"
)

// BenchmarkEntityCreateWorkflow compares POST of one 1 KB entity on the
// memory engine without imported workflows (plain: the default lifecycle)
// against the same create through a 3-state automatic workflow with one
// criterion (NEW -criterion-> CHECKED -> DONE) on the real engine and
// condition language: the "≥ 70 % of plain create" figure.
func BenchmarkEntityCreateWorkflow(b *testing.B) {
	for _, tc := range []struct{ name, workflows string }{
		{"plain", ""},
		{"threeState", `{"workflows":[{"version":"1.3","name":"bench","initialState":"NEW","states":{
		  "NEW":{"transitions":[{"name":"check","next":"CHECKED","manual":false,"criterion":{"type":"simple","jsonPath":"$.active","operatorType":"EQUALS","value":true}}]},
		  "CHECKED":{"transitions":[{"name":"finish","next":"DONE","manual":false}]},
		  "DONE":{}}}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ms, es := memory.NewModels(), memory.NewEntities()
			msvc := model.New(ms, nil)
			eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
			esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)))
			msvc.SetEntityCounter(esvc)
			cfg := config.Defaults()
			cfg.Validate()
			s, err := New(cfg, Deps{Auth: MockAuth{P: iam.MockPrincipal("user", nil)}, Model: msvc, Entities: esvc,
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			setup := []struct{ m, u, body string }{
				{"POST", "/api/model/import/JSON/SAMPLE_DATA/bench/1", entityDoc1K(0)},
				{"PUT", "/api/model/bench/1/lock", ""},
			}
			if tc.workflows != "" {
				setup = append(setup, struct{ m, u, body string }{"POST", "/api/model/bench/1/workflow/import", tc.workflows})
			}
			for _, r := range setup {
				if st, body := benchDo(s, r.m, r.u, []byte(r.body)); st != 200 {
					b.Fatalf("%s %s: %d %s", r.m, r.u, st, body)
				}
			}
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
