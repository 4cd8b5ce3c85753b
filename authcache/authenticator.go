package authcache

import (
	"log/slog"

	"github.com/valyala/fasthttp"

	"svc/iam"
)

// Authenticator is the fast.Authenticator of jwt mode. It never says why a
// token failed; the reason goes to the log as a slug (never the token).
type Authenticator struct {
	C   *Cache
	Log *slog.Logger
}

var errAuth = &iam.Error{Status: 401, Code: "UNAUTHORIZED", Message: "authentication failed"}

// Authenticate reads "Authorization: Bearer <token>" and verifies it.
func (a *Authenticator) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	h := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	var reason string
	switch {
	case len(h) == 0:
		reason = "missing-header"
	case len(h) < 7 || string(h[:7]) != "Bearer ":
		reason = "invalid-format"
	case len(h) == 7:
		reason = "empty-bearer"
	default:
		p, err := a.C.Verify(ctx, h[7:])
		if err == nil {
			return p, nil
		}
		reason = "token-invalid"
		if err == ErrStale {
			reason = "caches-stale"
		}
	}
	if a.Log != nil {
		a.Log.Warn("authentication failed", "reason", reason, "remote", ctx.RemoteAddr().String(),
			"method", string(ctx.Method()), "path", string(ctx.Path()))
	}
	return nil, errAuth
}
