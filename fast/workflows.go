package fast

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/workflow"
)

// workflowHandlers serves a model's workflow import and export
// (docs/decisions/0016-workflow-definitions.md) when a model service is configured, in the
// principal's tenant: another tenant's model is absent (404).
func workflowHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Model
	if svc == nil {
		return nil
	}
	return map[string]fasthttp.RequestHandler{
		"importEntityModelWorkflow": func(ctx *fasthttp.RequestCtx) {
			key, err := modelKeyOf(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			// Decoded here, before the model lookup: a bad body answers
			// 400 even for an unknown model.
			req, err := workflow.ParseImport(ctx.PostBody())
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			if err := svc.ImportWorkflows(dctx(ctx), PrincipalOf(ctx).TenantID, key, req, s.log); err != nil {
				s.writeError(ctx, err)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBodyString(`{"success":true}`)
		},
		"exportEntityModelWorkflow": func(ctx *fasthttp.RequestCtx) {
			key, err := modelKeyOf(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			res, err := svc.ExportWorkflows(dctx(ctx), PrincipalOf(ctx).TenantID, key)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			out, err := json.Marshal(res)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBody(out)
		},
	}
}
