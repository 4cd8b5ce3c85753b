package fast

import (
	"errors"

	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/apierr"
)

// RFC 6750 section 3 challenges. With no bearer token presented the
// challenge names no error (the client may not know it needs one); with a
// token that fails it says invalid_token; a valid token without the needed
// role gets insufficient_scope.
const (
	bearerChallenge         = `Bearer realm="svc"`
	bearerInvalidMalformed  = `Bearer realm="svc", error="invalid_token", error_description="malformed token"`
	bearerInvalidToken      = `Bearer realm="svc", error="invalid_token", error_description="invalid or expired token"`
	bearerInsufficientScope = `Bearer realm="svc", error="insufficient_scope", error_description="the token lacks the required role"`
	hdrWWWAuthenticate      = "WWW-Authenticate"
	authFailureMissing      = "missing token"
	authFailureMalformed    = "malformed token"
	authFailureInvalid      = "invalid or expired token"
)

// writeBearerRefusal is the 401 of a request whose bearer token is
// missing, malformed or does not verify. Every verification failure,
// whatever its cause, gets the same body and challenge, so the answer is no
// oracle; an error the authenticator does not classify counts as invalid.
func (s *Server) writeBearerRefusal(ctx *fasthttp.RequestCtx, err error) {
	msg, challenge := authFailureInvalid, bearerInvalidToken
	switch {
	case errors.Is(err, iam.ErrTokenMissing):
		msg, challenge = authFailureMissing, bearerChallenge
	case errors.Is(err, iam.ErrTokenMalformed):
		msg, challenge = authFailureMalformed, bearerInvalidMalformed
	}
	s.writeProblem(ctx, NewProblem(apierr.Unauthorized, msg))
	ctx.Response.Header.Set(hdrWWWAuthenticate, challenge)
}

// writeForbidden is the 403 of a verified principal lacking a role.
func (s *Server) writeForbidden(ctx *fasthttp.RequestCtx, msg string) {
	s.writeProblem(ctx, NewProblem(apierr.Forbidden, msg))
	ctx.Response.Header.Set(hdrWWWAuthenticate, bearerInsufficientScope)
}

// withChallenge documents the WWW-Authenticate header of a 401 or 403.
func withChallenge(resp *Response, desc string) *Response {
	resp.Headers = map[string]*Header{hdrWWWAuthenticate: {Description: desc, Schema: &Schema{Type: SchemaType{"string"}}}}
	return resp
}
