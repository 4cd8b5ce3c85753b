package fast

import (
	"context"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"
)

// logAccess writes the access line of one request (SVC_ACCESS_LOG): method,
// path (without the query, which may carry ids a log should not collect),
// status, body bytes, duration, request id and the caller's tenant when it
// was authenticated. start is zero for requests fasthttp could not parse.
func (s *Server) logAccess(ctx *fasthttp.RequestCtx, start time.Time) {
	if !s.cfg.AccessLog {
		return
	}
	var d time.Duration
	if !start.IsZero() {
		d = time.Since(start)
	}
	tenant := ""
	if p := PrincipalOf(ctx); p != nil {
		tenant = p.TenantID
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("method", string(ctx.Method())),
		slog.String("path", string(ctx.Path())),
		slog.Int("status", ctx.Response.StatusCode()),
		slog.Int("bytes", len(ctx.Response.Body())),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("request_id", string(requestID(ctx))),
		slog.String("tenant", tenant),
	)
}
