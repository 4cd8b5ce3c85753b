package fast

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"svc/platform/opmetrics"
	"svc/platform/telemetry"
)

// traced is instrument with OpenTelemetry on (SVC_OTEL_ENABLED): one server
// span per request, named by method and route template and continuing an
// incoming traceparent, left on the request for the spans of storage and
// compute calls made with it; plus the OTel request-duration metric.
// instrument picks it once per route at wiring time, so with telemetry off
// requests run exactly the untraced handler.
func (s *Server) traced(t *telemetry.T, route string, rm *routeMetrics, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := opmetrics.Now()
		s.metrics.inFlight.Add(1)
		method := string(ctx.Method())
		pctx := t.Propagator().Extract(context.Background(), headerCarrier{&ctx.Request.Header})
		_, span := t.Tracer().Start(pctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("http.route", route),
				attribute.String("url.path", string(ctx.Path()))))
		ctx.SetUserValue(telemetry.SpanKey, span)
		defer func() {
			status := ctx.Response.StatusCode()
			s.metrics.inFlight.Add(-1)
			rm.latency().Done(start)
			rm.counter(ctx.Method(), status).Inc()
			span.SetAttributes(attribute.Int("http.response.status_code", status),
				attribute.String("svc.request_id", string(requestID(ctx))))
			if p := PrincipalOf(ctx); p != nil {
				span.SetAttributes(attribute.String("svc.tenant", p.TenantID))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, strconv.Itoa(status))
			}
			span.End()
		}()
		next(ctx)
	}
}

// headerCarrier reads W3C trace context from fasthttp request headers.
type headerCarrier struct{ h *fasthttp.RequestHeader }

var _ propagation.TextMapCarrier = headerCarrier{}

func (c headerCarrier) Get(k string) string { return string(c.h.Peek(k)) }
func (c headerCarrier) Set(k, v string)     { c.h.Set(k, v) }
func (c headerCarrier) Keys() []string {
	var out []string
	for k := range c.h.All() {
		out = append(out, string(k))
	}
	return out
}
