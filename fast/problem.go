package fast

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
)

// Problem is an RFC 9457 problem detail in svc's envelope (docs/decisions/0004-error-envelope.md).
// Props holds error-specific members of `properties`; errorCode and
// retryable are written from Code and Retryable. The status is the code's
// (platform/apierr's catalogue); no handler picks one.
type Problem struct {
	Code      apierr.Code
	Message   string
	Retryable bool
	Props     []Prop
	// Internal is the cause of a 5xx; shown only in verbose mode.
	Internal error
}

// Prop is one error-specific member of `properties`. Value is written as JSON
// when Raw is set, as a JSON string otherwise.
type Prop struct {
	Key   string
	Value string
	Raw   bool
}

// StrProp and RawProp build properties without a map round trip.
func StrProp(k, v string) Prop { return Prop{Key: k, Value: v} }
func RawProp(k, v string) Prop { return Prop{Key: k, Value: v, Raw: true} }
func IntProp(k string, v int64) Prop {
	return Prop{Key: k, Value: strconv.FormatInt(v, 10), Raw: true}
}

// NewProblem is the usual constructor for a 4xx problem.
func NewProblem(code apierr.Code, msg string, props ...Prop) *Problem {
	return &Problem{Code: code, Message: msg, Props: props}
}

// Status is the HTTP status of the problem's code.
func (p *Problem) Status() int { return p.Code.HTTPStatus() }

func (p *Problem) Error() string { return p.Code.String() + ": " + p.Message }

// writeProblem renders p as application/problem+json. instance is the request
// path without the context path (docs/decisions/0004-error-envelope.md).
func (s *Server) writeProblem(ctx *fasthttp.RequestCtx, p *Problem) {
	// Keep the request id across the reset (the access log and the client
	// see the same one).
	var idBuf [128]byte
	id := append(idBuf[:0], requestID(ctx)...)
	ctx.Response.Reset()
	if len(id) > 0 {
		ctx.Response.Header.SetBytesV(hdrRequestID, id)
	} else {
		s.stampRequestID(ctx)
	}
	status := p.Status()
	code := p.Code.String()
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/problem+json")
	b := make([]byte, 0, 256)
	b = append(b, `{"type":"about:blank","title":`...)
	b = appendJSONString(b, fasthttp.StatusMessage(status))
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	detail := code + ": " + p.Message
	var ticket string
	if status >= 500 {
		ticket = uuid.NewString()
		if s.cfg.ErrorResponseMode == "verbose" && p.Internal != nil {
			detail = code + ": " + p.Internal.Error()
		} else if p.Code == apierr.ServerError {
			detail = "SERVER_ERROR: internal error [ticket: " + ticket + "]"
		}
		if p.Internal != nil {
			s.log.LogAttrs(context.Background(), slog.LevelError, "request failed", slog.String("ticket", ticket),
				slog.String("request_id", string(requestID(ctx))), slog.String("path", string(ctx.Path())),
				slog.Int("status", status), slog.String("code", code), slog.Any("err", p.Internal))
		}
	} else if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.LogAttrs(context.Background(), slog.LevelDebug, "request refused",
			slog.String("request_id", string(requestID(ctx))), slog.String("path", string(ctx.Path())),
			slog.Int("status", status), slog.String("code", code), slog.String("detail", p.Message))
	}
	b = append(b, `,"detail":`...)
	b = appendJSONString(b, detail)
	b = append(b, `,"instance":`...)
	b = appendJSONString(b, s.instancePath(ctx))
	if ticket != "" {
		b = append(b, `,"ticket":`...)
		b = appendJSONString(b, ticket)
	}
	b = append(b, `,"properties":{"errorCode":`...)
	b = appendJSONString(b, code)
	retryable := p.Retryable || p.Code.Retryable()
	if status >= 400 && status < 500 || retryable {
		if retryable {
			b = append(b, `,"retryable":true`...)
		} else {
			b = append(b, `,"retryable":false`...)
		}
	}
	for _, pr := range p.Props {
		b = append(b, ',')
		b = appendJSONString(b, pr.Key)
		b = append(b, ':')
		if pr.Raw {
			b = append(b, pr.Value...)
		} else {
			b = appendJSONString(b, pr.Value)
		}
	}
	b = append(b, "}}"...)
	ctx.SetBody(b)
}

// instancePath strips the context path from the request path.
func (s *Server) instancePath(ctx *fasthttp.RequestCtx) string {
	p := string(ctx.Path())
	if cp := s.cfg.ContextPath; cp != "" && len(p) >= len(cp) && p[:len(cp)] == cp &&
		(len(p) == len(cp) || p[len(cp)] == '/') {
		p = p[len(cp):]
		if p == "" {
			p = "/"
		}
	}
	return p
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal, escaping as
// encoding/json does for the characters that matter in HTML contexts.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
