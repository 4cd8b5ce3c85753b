package fast

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/apierr"
)

const (
	hdrRequestID = "X-Request-ID"
	// principalKey is the user-value key of the request's principal.
	principalKey = iam.PrincipalKey
)

func initRequestIDPrefix(p *[8]byte) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	hex.Encode(p[:], b[:])
}

// withRequestID echoes a sane incoming X-Request-ID or mints one from a
// per-process prefix and a counter, without allocating. The id is set
// before the handler runs, so the handler's log lines (problem bodies
// included) carry the id the client sees; with SVC_ACCESS_LOG each request
// ends with one access line.
func (s *Server) withRequestID(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.cfg.AccessLog {
		return func(ctx *fasthttp.RequestCtx) {
			start := time.Now()
			s.stampRequestID(ctx)
			next(ctx)
			s.logAccess(ctx, start)
		}
	}
	return func(ctx *fasthttp.RequestCtx) {
		s.stampRequestID(ctx)
		next(ctx)
	}
}

// requestID is the id stamped on the response (empty before stamping).
func requestID(ctx *fasthttp.RequestCtx) []byte { return ctx.Response.Header.Peek(hdrRequestID) }

// requestIDKey is hdrRequestID as the response header writes it
// (normalised), so stamping it, once per request, skips the normalising.
var requestIDKey = []byte("X-Request-Id")

func (s *Server) stampRequestID(ctx *fasthttp.RequestCtx) {
	if in := ctx.Request.Header.Peek(hdrRequestID); validRequestID(in) {
		ctx.Response.Header.SetCanonical(requestIDKey, in)
		return
	}
	var buf [32]byte
	b := append(buf[:0], s.reqPfx[:]...)
	b = append(b, '-')
	b = strconv.AppendUint(b, s.reqSeq.Add(1), 10)
	ctx.Response.Header.SetCanonical(requestIDKey, b)
}

func validRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// recovered turns a handler panic into 500 SERVER_ERROR with a ticket; the
// stack goes to the log under that ticket, never to the client.
func (s *Server) recovered(ctx *fasthttp.RequestCtx, v any) {
	p := &Problem{Code: apierr.ServerError, Message: "internal error",
		Internal: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
	s.writeProblem(ctx, p)
}

// authorize resolves the principal and enforces the route's access level.
// Authentication failures are RFC 6750 401s that say only "missing",
// "malformed" or "invalid or expired" (see bearer.go).
func (s *Server) authorize(access Access, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if access == Public {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		p, err := s.deps.Auth.Authenticate(ctx)
		if err != nil || p == nil {
			s.writeBearerRefusal(ctx, err)
			return
		}
		if access == Admin && !p.HasRole(iam.RoleAdmin) {
			s.writeForbidden(ctx, "admin role required")
			return
		}
		ctx.SetUserValue(principalKey, p)
		next(ctx)
	}
}

// PrincipalOf returns the principal authorize stored on ctx.
func PrincipalOf(ctx *fasthttp.RequestCtx) *iam.Principal {
	p, _ := ctx.UserValue(principalKey).(*iam.Principal)
	return p
}

func (s *Server) notImplemented(ctx *fasthttp.RequestCtx) {
	s.writeProblem(ctx, NewProblem(apierr.NotImplemented, "this operation is not implemented yet"))
}

func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	s.writeProblem(ctx, NewProblem(apierr.NotFound, "no route for "+string(ctx.Method())+" "+string(ctx.Path())))
}

func (s *Server) methodNotAllowed(ctx *fasthttp.RequestCtx) {
	allow := string(ctx.Response.Header.Peek("Allow"))
	s.writeProblem(ctx, NewProblem(apierr.MethodNotAllowed, "method "+string(ctx.Method())+" is not allowed here; allowed: "+allow))
	ctx.Response.Header.Set("Allow", allow)
}

// health is {ctx}/health: UP unless the server is draining.
func (s *Server) health(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	if s.draining.Load() || (s.deps.Ready != nil && !s.deps.Ready()) {
		ctx.SetStatusCode(503)
		ctx.SetBodyString(`{"status":"DOWN"}`)
		return
	}
	ctx.SetBodyString(`{"status":"UP"}`)
}
