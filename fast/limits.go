package fast

import (
	"errors"
	"net"
	"strconv"
	"svc/platform/apierr"
	"time"

	"github.com/valyala/fasthttp"
)

// requestError answers every request fasthttp could not read or parse
// (oversized header block, body over SVC_HTTP_MAX_BODY_BYTES, malformed
// request line, a read timeout) with problem+json instead of fasthttp's
// plain-text pages, so every answer of svc has one shape.
func (s *Server) requestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	var p *Problem
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		p = s.bodyTooLarge()
	case errors.As(err, &small):
		p = NewProblem(apierr.HeadersTooLarge, "request header block larger than "+strconv.Itoa(MaxHeaderBytes)+" bytes")
	case errors.As(err, &netErr) && netErr.Timeout():
		p = NewProblem(apierr.RequestTimeout, "request not received in time")
	default:
		// The parse error text names fasthttp internals and echoes bytes of
		// the request; the client gets a fixed message.
		p = NewProblem(apierr.BadRequest, "malformed HTTP request")
	}
	s.writeProblem(ctx, p)
	s.logAccess(ctx, time.Time{})
}

// bodyTooLarge is the 413 of a body over SVC_HTTP_MAX_BODY_BYTES, whether
// fasthttp or wholeBody (streamed bodies) found it.
func (s *Server) bodyTooLarge() *Problem {
	return NewProblem(apierr.PayloadTooLarge, "request body larger than "+strconv.Itoa(s.maxBody())+
		" bytes (SVC_HTTP_MAX_BODY_BYTES)", IntProp("maxBodyBytes", int64(s.maxBody())))
}

// maxBody is the listener's body limit, SVC_HTTP_MAX_BODY_BYTES.
func (s *Server) maxBody() int {
	if s.cfg.HTTPMaxBodyBytes > 0 {
		return s.cfg.HTTPMaxBodyBytes
	}
	return MaxBodyBytes
}
