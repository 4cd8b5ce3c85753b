package fast

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"svc/iam/federation"
	"svc/platform/apierr"
)

// OIDC providers: /oauth/oidc/providers… (admin per the route table).
func oidcHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.OIDC == nil {
		return nil
	}
	return map[string]fasthttp.RequestHandler{
		"listOidcProviders":      s.listOIDCProviders,
		"registerOidcProvider":   s.registerOIDCProvider,
		"updateOidcProvider":     s.withProviderID(s.updateOIDCProvider),
		"invalidateOidcProvider": s.withProviderID(s.invalidateOIDCProvider),
		"reactivateOidcProvider": s.withProviderID(s.reactivateOIDCProvider),
		"deleteOidcProvider":     s.withProviderID(s.deleteOIDCProvider),
		"reloadOidcProviders":    s.reloadOIDCProviders,
	}
}

// withProviderID validates {id} before anything else, as parameter
// binding would.
func (s *Server) withProviderID(h func(ctx *fasthttp.RequestCtx, tenant, id string)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		id := routeParam(ctx, "id")
		if err := federation.CheckProviderID(id); err != nil {
			s.writeError(ctx, err)
			return
		}
		h(ctx, PrincipalOf(ctx).TenantID, id)
	}
}

func (s *Server) listOIDCProviders(ctx *fasthttp.RequestCtx) {
	activeOnly := false
	if raw := ctx.QueryArgs().Peek("activeOnly"); raw != nil {
		v, err := strconv.ParseBool(string(raw))
		if err != nil {
			s.writeError(ctx, badParam("activeOnly", string(raw)))
			return
		}
		activeOnly = v
	}
	l, err := s.deps.OIDC.List(dctx(ctx), PrincipalOf(ctx).TenantID, activeOnly)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, l)
}

func (s *Server) registerOIDCProvider(ctx *fasthttp.RequestCtx) {
	var r federation.ProviderRegistration
	present, err := fedDecodeBody(ctx, &r)
	if err == nil && !present {
		err = apierr.New(apierr.BadRequest, "request body is required")
	}
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	v, err := s.deps.OIDC.Register(dctx(ctx), PrincipalOf(ctx).TenantID, &r)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, v)
}

func (s *Server) updateOIDCProvider(ctx *fasthttp.RequestCtx, tenant, id string) {
	body := ctx.PostBody()
	if len(body) > fedMaxBody {
		s.writeError(ctx, apierr.New(apierr.BadRequest, "request body is larger than 1 MiB"))
		return
	}
	v, err := s.deps.OIDC.Patch(dctx(ctx), tenant, id, body)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, v)
}

func (s *Server) invalidateOIDCProvider(ctx *fasthttp.RequestCtx, tenant, id string) {
	if err := s.deps.OIDC.Invalidate(dctx(ctx), tenant, id); err != nil {
		s.writeError(ctx, err)
		return
	}
	fedWriteEmpty(ctx)
}

func (s *Server) reactivateOIDCProvider(ctx *fasthttp.RequestCtx, tenant, id string) {
	var body struct {
		ReactivateKeys *bool `json:"reactivateKeys"`
	}
	if _, err := fedDecodeBody(ctx, &body); err != nil {
		s.writeError(ctx, err)
		return
	}
	keys := body.ReactivateKeys == nil || *body.ReactivateKeys
	v, err := s.deps.OIDC.Reactivate(dctx(ctx), tenant, id, keys)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, v)
}

func (s *Server) deleteOIDCProvider(ctx *fasthttp.RequestCtx, tenant, id string) {
	if err := s.deps.OIDC.Delete(dctx(ctx), tenant, id); err != nil {
		s.writeError(ctx, err)
		return
	}
	fedWriteEmpty(ctx)
}

func (s *Server) reloadOIDCProviders(ctx *fasthttp.RequestCtx) {
	if err := s.deps.OIDC.Reload(dctx(ctx)); err != nil {
		s.writeError(ctx, err)
		return
	}
	fedWriteEmpty(ctx)
}
