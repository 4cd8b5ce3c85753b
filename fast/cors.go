package fast

import (
	"bytes"
	"net/url"

	"github.com/valyala/fasthttp"

	"svc/platform/config"
)

const (
	corsAllowMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	// Last-Event-ID: a browser's EventSource sends it when it reconnects
	// to a change stream, and it is no CORS-safelisted header, so a
	// cross-origin reconnect is preflighted and needs it allowed.
	corsAllowHeaders = "Authorization, Content-Type, Last-Event-ID, traceparent, tracestate"
	corsMaxAge       = "86400"
)

// withCORS implements the modes of SVC_CORS_ENABLED and
// SVC_CORS_ALLOWED_ORIGINS. Preflights are answered here, before auth.
func (s *Server) withCORS(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	mode := s.cfg.CORSMode()
	if mode == config.CORSDisabled {
		return next
	}
	allowed := make(map[string]struct{}, len(s.cfg.CORSAllowedOrigins))
	for _, o := range s.cfg.CORSAllowedOrigins {
		allowed[o] = struct{}{}
	}
	match := func(origin []byte) bool {
		switch mode {
		case config.CORSWildcard:
			return true
		case config.CORSAllowlist:
			_, ok := allowed[string(origin)]
			return ok
		default:
			return loopbackOrigin(origin)
		}
	}
	return func(ctx *fasthttp.RequestCtx) {
		origin := ctx.Request.Header.Peek("Origin")
		if ctx.IsOptions() && len(origin) > 0 && len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
			h := &ctx.Response.Header
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			setAllowOrigin(ctx, mode, origin, match)
			h.Add("Vary", "Origin")
			ctx.SetStatusCode(fasthttp.StatusNoContent)
			return
		}
		next(ctx)
		if len(origin) > 0 {
			setAllowOrigin(ctx, mode, origin, match)
		}
		ctx.Response.Header.Add("Vary", "Origin")
	}
}

func setAllowOrigin(ctx *fasthttp.RequestCtx, mode config.CORSMode, origin []byte, match func([]byte) bool) {
	if !match(origin) {
		return
	}
	if mode == config.CORSWildcard {
		ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
		return
	}
	ctx.Response.Header.SetBytesV("Access-Control-Allow-Origin", origin)
}

// loopbackOrigin accepts http(s) origins on localhost, 127.0.0.1 or [::1]
// on any port, written in lower case, with no path or userinfo.
func loopbackOrigin(origin []byte) bool {
	var rest []byte
	switch {
	case bytes.HasPrefix(origin, []byte("http://")):
		rest = origin[len("http://"):]
	case bytes.HasPrefix(origin, []byte("https://")):
		rest = origin[len("https://"):]
	default:
		return false
	}
	if bytes.ContainsAny(rest, "/@?#") {
		return false
	}
	u, err := url.Parse("http://" + string(rest))
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
	default:
		return false
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return false
			}
		}
	} else if bytes.HasSuffix(rest, []byte(":")) {
		return false
	}
	return true
}
