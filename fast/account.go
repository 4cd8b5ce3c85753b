package fast

import (
	"svc/platform/apierr"

	"github.com/valyala/fasthttp"
)

// accountHandlers serves GET /account from the principal. The subscription
// is the fixed "unlimited" one clients expect; /account/subscriptions
// stays 501 NOT_IMPLEMENTED by design (docs/decisions/0003-http-surface-and-routing.md).
func accountHandlers(s *Server) map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"accountGet": s.account}
}

func (s *Server) account(ctx *fasthttp.RequestCtx) {
	p := PrincipalOf(ctx)
	if p == nil {
		s.writeProblem(ctx, NewProblem(apierr.Unauthorized, "no user context"))
		return
	}
	b := append([]byte(nil), `{"userAccountInfo":{"userId":`...)
	b = appendJSONString(b, p.UserID)
	b = append(b, `,"userName":`...)
	b = appendJSONString(b, p.UserName)
	b = append(b, `,"legalEntity":{"id":`...)
	b = appendJSONString(b, p.TenantID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, p.TenantName)
	b = append(b, `},"roles":[`...)
	for i, r := range p.Roles {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, r)
		b = append(b, '}')
	}
	b = append(b, `],"currentSubscription":{"id":"unlimited","legalEntityId":`...)
	b = appendJSONString(b, p.TenantID)
	b = append(b, `,"status":"ACTIVE","tierName":"unlimited","periodFrom":"2020-01-01T00:00:00Z","limits":[]}}}`...)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
