package fast

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"svc/iam/federation"
	"svc/platform/apierr"
)

// OIDC providers: /oauth/oidc/providers… (admin per the route table).
func init() {
	registerArea(func(s *Server) map[string]fasthttp.RequestHandler {
		p := s.deps.OIDC
		if p == nil {
			return nil
		}
		// withID validates {id} before anything else, as parameter binding
		// would.
		withID := func(h func(ctx *fasthttp.RequestCtx, tenant, id string)) fasthttp.RequestHandler {
			return func(ctx *fasthttp.RequestCtx) {
				id := routeParam(ctx, "id")
				if err := federation.CheckProviderID(id); err != nil {
					s.writeError(ctx, err)
					return
				}
				h(ctx, PrincipalOf(ctx).TenantID, id)
			}
		}
		return map[string]fasthttp.RequestHandler{
			"listOidcProviders": func(ctx *fasthttp.RequestCtx) {
				activeOnly := false
				if raw := ctx.QueryArgs().Peek("activeOnly"); raw != nil {
					v, err := strconv.ParseBool(string(raw))
					if err != nil {
						s.writeError(ctx, badParam("activeOnly", string(raw)))
						return
					}
					activeOnly = v
				}
				l, err := p.List(dctx(ctx), PrincipalOf(ctx).TenantID, activeOnly)
				if err != nil {
					s.writeError(ctx, err)
					return
				}
				s.writeJSON(ctx, l)
			},
			"registerOidcProvider": func(ctx *fasthttp.RequestCtx) {
				var r federation.ProviderRegistration
				present, err := fedDecodeBody(ctx, &r)
				if err == nil && !present {
					err = apierr.New(apierr.BadRequest, "request body is required")
				}
				if err != nil {
					s.writeError(ctx, err)
					return
				}
				v, err := p.Register(dctx(ctx), PrincipalOf(ctx).TenantID, &r)
				if err != nil {
					s.writeError(ctx, err)
					return
				}
				s.writeJSON(ctx, v)
			},
			"updateOidcProvider": withID(func(ctx *fasthttp.RequestCtx, tenant, id string) {
				body := ctx.PostBody()
				if len(body) > fedMaxBody {
					s.writeError(ctx, apierr.New(apierr.BadRequest, "request body is larger than 1 MiB"))
					return
				}
				v, err := p.Patch(dctx(ctx), tenant, id, body)
				if err != nil {
					s.writeError(ctx, err)
					return
				}
				s.writeJSON(ctx, v)
			}),
			"invalidateOidcProvider": withID(func(ctx *fasthttp.RequestCtx, tenant, id string) {
				if err := p.Invalidate(dctx(ctx), tenant, id); err != nil {
					s.writeError(ctx, err)
					return
				}
				fedWriteEmpty(ctx)
			}),
			"reactivateOidcProvider": withID(func(ctx *fasthttp.RequestCtx, tenant, id string) {
				var body struct {
					ReactivateKeys *bool `json:"reactivateKeys"`
				}
				if _, err := fedDecodeBody(ctx, &body); err != nil {
					s.writeError(ctx, err)
					return
				}
				keys := body.ReactivateKeys == nil || *body.ReactivateKeys
				v, err := p.Reactivate(dctx(ctx), tenant, id, keys)
				if err != nil {
					s.writeError(ctx, err)
					return
				}
				s.writeJSON(ctx, v)
			}),
			"deleteOidcProvider": withID(func(ctx *fasthttp.RequestCtx, tenant, id string) {
				if err := p.Delete(dctx(ctx), tenant, id); err != nil {
					s.writeError(ctx, err)
					return
				}
				fedWriteEmpty(ctx)
			}),
			"reloadOidcProviders": func(ctx *fasthttp.RequestCtx) {
				if err := p.Reload(dctx(ctx)); err != nil {
					s.writeError(ctx, err)
					return
				}
				fedWriteEmpty(ctx)
			},
		}
	})
}
