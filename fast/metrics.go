package fast

import (
	"crypto/subtle"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// httpMetrics holds request counters by route and status, a latency
// histogram per route and the in-flight gauge, in a private set so tests can
// run several servers side by side.
type httpMetrics struct {
	set      *metrics.Set
	inFlight atomic.Int64
	mu       sync.Mutex
}

// routeMetrics is resolved once per route at wiring time, so the request
// path only indexes arrays.
type routeMetrics struct {
	m        *httpMetrics
	route    string
	latency  *metrics.Histogram
	byStatus [600]atomic.Pointer[metrics.Counter]
}

func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{set: metrics.NewSet()}
	m.set.NewGauge(`svc_http_requests_in_flight`, func() float64 { return float64(m.inFlight.Load()) })
	return m
}

func (m *httpMetrics) forRoute(route string) *routeMetrics {
	return &routeMetrics{
		m:       m,
		route:   route,
		latency: m.set.GetOrCreateHistogram(`svc_http_request_duration_seconds{route="` + route + `"}`),
	}
}

func (rm *routeMetrics) counter(status int) *metrics.Counter {
	if status < 100 || status >= 600 {
		status = 599
	}
	if c := rm.byStatus[status].Load(); c != nil {
		return c
	}
	c := rm.m.set.GetOrCreateCounter(`svc_http_requests_total{route="` + rm.route + `",status="` + strconv.Itoa(status) + `"}`)
	rm.byStatus[status].Store(c)
	return c
}

// instrument counts and times every request of one route.
func (s *Server) instrument(route string, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	rm := s.metrics.forRoute(route)
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		s.metrics.inFlight.Add(1)
		defer func() {
			s.metrics.inFlight.Add(-1)
			rm.latency.UpdateDuration(start)
			rm.counter(ctx.Response.StatusCode()).Inc()
		}()
		next(ctx)
	}
}

// adminHandler serves /livez, /readyz and /metrics on the admin listener.
func (s *Server) adminHandler() fasthttp.RequestHandler {
	bearer := []byte("Bearer " + s.cfg.MetricsBearer)
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain; charset=utf-8")
		switch string(ctx.Path()) {
		case "/livez":
			ctx.SetBodyString("ok")
		case "/readyz":
			if s.draining.Load() || (s.deps.Ready != nil && !s.deps.Ready()) {
				ctx.SetStatusCode(503)
				ctx.SetBodyString("not ready")
				return
			}
			ctx.SetBodyString("ready")
		case "/metrics":
			if s.cfg.MetricsBearer != "" &&
				subtle.ConstantTimeCompare(ctx.Request.Header.Peek("Authorization"), bearer) != 1 {
				ctx.SetStatusCode(401)
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="svc metrics"`)
				ctx.SetBodyString("unauthorized")
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			w := ctx.Response.BodyWriter()
			metrics.WriteProcessMetrics(w)
			s.metrics.set.WritePrometheus(w)
		default:
			ctx.SetStatusCode(404)
			ctx.SetBodyString("not found")
		}
	}
}
