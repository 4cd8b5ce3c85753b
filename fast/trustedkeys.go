package fast

import (
	"github.com/valyala/fasthttp"

	"svc/iam/federation"
	"svc/platform/apierr"
)

// Trusted keys: /oauth/keys/trusted… (admin; middleware enforces ROLE_ADMIN).
// With registration disabled every operation answers 404 FEATURE_DISABLED,
// with or without a store behind it.
func trustedKeyHandlers(s *Server) map[string]fasthttp.RequestHandler {
	ops := []string{"listTrustedKeys", "registerTrustedKey", "deleteTrustedKey", "invalidateTrustedKey", "reactivateTrustedKey"}
	out := map[string]fasthttp.RequestHandler{}
	if !s.cfg.TrustedKeyRegistrationEnabled {
		for _, op := range ops {
			out[op] = s.trustedDisabled
		}
		return out
	}
	if s.deps.TrustedKeys == nil {
		return nil
	}
	return map[string]fasthttp.RequestHandler{
		"listTrustedKeys":      s.listTrustedKeys,
		"registerTrustedKey":   s.registerTrustedKey,
		"deleteTrustedKey":     s.deleteTrustedKey,
		"invalidateTrustedKey": s.invalidateTrustedKey,
		"reactivateTrustedKey": s.reactivateTrustedKey,
	}
}

func (s *Server) listTrustedKeys(ctx *fasthttp.RequestCtx) {
	l, err := s.deps.TrustedKeys.List(dctx(ctx), PrincipalOf(ctx).TenantID)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, l)
}

func (s *Server) registerTrustedKey(ctx *fasthttp.RequestCtx) {
	var r federation.TrustedKeyRegistration
	present, err := fedDecodeBody(ctx, &r)
	if err == nil && !present {
		err = apierr.New(apierr.BadRequest, "request body is required")
	}
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	v, err := s.deps.TrustedKeys.Register(dctx(ctx), PrincipalOf(ctx).TenantID, &r)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, v)
}

func (s *Server) deleteTrustedKey(ctx *fasthttp.RequestCtx) {
	if err := s.deps.TrustedKeys.Delete(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "keyId")); err != nil {
		s.writeError(ctx, err)
		return
	}
	fedWriteEmpty(ctx)
}

func (s *Server) invalidateTrustedKey(ctx *fasthttp.RequestCtx) {
	kid := routeParam(ctx, "keyId")
	var body struct {
		GracePeriodSec *int64 `json:"gracePeriodSec"`
	}
	if err := federation.CheckKeyID(kid); err != nil {
		s.writeError(ctx, err)
		return
	}
	if _, err := fedDecodeBody(ctx, &body); err != nil {
		s.writeError(ctx, err)
		return
	}
	if err := s.deps.TrustedKeys.Invalidate(dctx(ctx), PrincipalOf(ctx).TenantID, kid, body.GracePeriodSec); err != nil {
		s.writeError(ctx, err)
		return
	}
	fedWriteEmpty(ctx)
}

func (s *Server) reactivateTrustedKey(ctx *fasthttp.RequestCtx) {
	kid := routeParam(ctx, "keyId")
	if err := federation.CheckKeyID(kid); err != nil {
		s.writeError(ctx, err)
		return
	}
	var r federation.Reactivation
	present, err := fedDecodeBody(ctx, &r)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	rp := &r
	if !present {
		rp = nil
	}
	v, err := s.deps.TrustedKeys.Reactivate(dctx(ctx), PrincipalOf(ctx).TenantID, kid, rp)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	s.writeJSON(ctx, v)
}

func (s *Server) trustedDisabled(ctx *fasthttp.RequestCtx) {
	s.writeError(ctx, apierr.New(apierr.FeatureDisabled, "trusted-key registration is disabled"))
}
