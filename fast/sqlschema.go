package fast

import (
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
)

// sqlSchemaHandlers serves the nine /sql/schema/… operations when an SQL
// schema service is configured. Every operation runs in the principal's
// tenant: another tenant's schema is absent (404).
func sqlSchemaHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.SQLSchema
	if svc == nil {
		return nil
	}
	reply := func(ctx *fasthttp.RequestCtx, out any, err error) {
		if err != nil {
			s.writeError(ctx, err)
			return
		}
		s.writeJSON(ctx, out)
	}
	// schemaName reads the required ?schemaName= (400 when absent).
	schemaName := func(ctx *fasthttp.RequestCtx) (string, error) {
		if !ctx.QueryArgs().Has("schemaName") {
			return "", apierr.New(apierr.BadRequest, "query parameter 'schemaName' is required", apierr.P("parameter", "schemaName"))
		}
		return string(ctx.QueryArgs().Peek("schemaName")), nil
	}
	return map[string]fasthttp.RequestHandler{
		"getSchemaByName": func(ctx *fasthttp.RequestCtx) {
			name, err := schemaName(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			out, err := svc.GetByName(dctx(ctx), PrincipalOf(ctx).TenantID, name)
			reply(ctx, out, err)
		},
		"saveSchema": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.Save(dctx(ctx), PrincipalOf(ctx).TenantID, ctx.PostBody())
			reply(ctx, out, err)
		},
		"deleteSchemaByName": func(ctx *fasthttp.RequestCtx) {
			name, err := schemaName(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			out, err := svc.DeleteByName(dctx(ctx), PrincipalOf(ctx).TenantID, name)
			reply(ctx, out, err)
		},
		"genTables": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.GenTables(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "entityModelId"))
			reply(ctx, out, err)
		},
		"getSchemas": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.List(dctx(ctx), PrincipalOf(ctx).TenantID)
			reply(ctx, out, err)
		},
		"putSchema": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.PutDefault(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "schemaName"))
			reply(ctx, out, err)
		},
		"updateTables": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.UpdateTables(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "entityModelId"), ctx.PostBody())
			reply(ctx, out, err)
		},
		"getSchema": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.Get(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "schemaId"))
			reply(ctx, out, err)
		},
		"deleteSchema": func(ctx *fasthttp.RequestCtx) {
			out, err := svc.Delete(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "schemaId"))
			reply(ctx, out, err)
		},
	}
}
