package fast

import (
	"bytes"
	"context"
	"crypto/subtle"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"svc/changefeed"
	"svc/platform/opmetrics"
	"svc/storage"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/pprofhandler"
)

// httpMetrics holds request counters by route and status, a latency
// histogram per route and the in-flight gauge, in the set of Deps.Metrics
// (or a private one, so tests can run several servers side by side).
type httpMetrics struct {
	set *metrics.Set
	// hists holds the latency histograms (lock-free, platform/opmetrics),
	// written with set.
	hists *opmetrics.Set
	mu    sync.Mutex
	// inFlight is written twice by every request, from either core: alone
	// on its cache line, away from the pointers above that requests read.
	_        [64]byte
	inFlight atomic.Int64
	_        [56]byte
}

// routeMetrics is resolved once per route at wiring time, so the request
// path only indexes arrays. Labels are the route template, a method from a
// fixed list and the status code, so cardinality stays bounded whatever
// clients send.
type routeMetrics struct {
	m     *httpMetrics
	route string
	// latency is created on the route's first request: a route never
	// called exports no series (issue 26: /metrics was mostly the zero
	// histograms of every route).
	latencyOnce sync.Once
	latencyH    *opmetrics.Histogram
	// byMethod holds, per method of methodLabels, the counters by status,
	// allocated on the method's first request.
	byMethod [len(methodLabels)]atomic.Pointer[[600]atomic.Pointer[metrics.Counter]]
}

// methodLabels are the method label values; anything else counts as OTHER.
var methodLabels = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "OTHER"}

func methodIndex(m []byte) int {
	for i, l := range methodLabels[:len(methodLabels)-1] {
		if string(m) == l {
			return i
		}
	}
	return len(methodLabels) - 1
}

func newHTTPMetrics(set *metrics.Set) *httpMetrics {
	// # HELP and # TYPE lines for every metric, so Prometheus reads the
	// types natively (helpTexts fills in the help strings). A process-wide
	// switch of the metrics library; setting it again is harmless.
	metrics.ExposeMetadata(true)
	if set == nil {
		set = metrics.NewSet()
	}
	m := &httpMetrics{set: set, hists: opmetrics.New(set)}
	m.set.NewGauge(`http_requests_in_flight`, func() float64 { return float64(m.inFlight.Load()) })
	return m
}

func (m *httpMetrics) forRoute(route string) *routeMetrics {
	return &routeMetrics{m: m, route: route}
}

// latency is the route's duration histogram, registered on first use.
func (rm *routeMetrics) latency() *opmetrics.Histogram {
	rm.latencyOnce.Do(func() {
		rm.latencyH = rm.m.hists.Histogram(`http_request_duration_seconds{route="`+rm.route+`"}`, metrics.PrometheusHistogramDefaultBuckets)
	})
	return rm.latencyH
}

func (rm *routeMetrics) counter(method []byte, status int) *metrics.Counter {
	if status < 100 || status >= 600 {
		status = 599
	}
	mi := methodIndex(method)
	byStatus := rm.byMethod[mi].Load()
	if byStatus == nil {
		rm.byMethod[mi].CompareAndSwap(nil, new([600]atomic.Pointer[metrics.Counter]))
		byStatus = rm.byMethod[mi].Load()
	}
	if c := byStatus[status].Load(); c != nil {
		return c
	}
	c := rm.m.set.GetOrCreateCounter(`http_requests_total{route="` + rm.route + `",method="` + methodLabels[mi] +
		`",status="` + strconv.Itoa(status) + `"}`)
	byStatus[status].Store(c)
	return c
}

// exportPool adds the storage pool's gauges and its idle-close counter,
// read at scrape time.
func (m *httpMetrics) exportPool(pool func() storage.PoolStats) {
	if pool == nil {
		return
	}
	m.set.RegisterMetricsWriter(func(w io.Writer) {
		st := pool()
		metrics.WriteGaugeUint64(w, "db_pool_max_connections", uint64(max(st.Max, 0)))
		metrics.WriteGaugeUint64(w, "db_pool_min_connections", uint64(max(st.Min, 0)))
		metrics.WriteGaugeUint64(w, "db_pool_connections", uint64(max(st.Total, 0)))
		metrics.WriteGaugeUint64(w, "db_pool_idle_connections", uint64(max(st.Idle, 0)))
		metrics.WriteGaugeUint64(w, "db_pool_in_use_connections", uint64(max(st.InUse, 0)))
		metrics.WriteCounterUint64(w, "db_pool_idle_closed_total", uint64(max(st.IdleClosed, 0)))
	})
}

// exportChanges adds the change feed's lag, measured at scrape time.
func (m *httpMetrics) exportChanges(feed *changefeed.Service) {
	if feed == nil {
		return
	}
	m.set.RegisterMetricsWriter(func(w io.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t, err := feed.Metrics(ctx)
		if err != nil {
			return
		}
		metrics.WriteGaugeUint64(w, "changefeed_subscriptions", uint64(t.Subscriptions))
		metrics.WriteGaugeUint64(w, "changefeed_unacknowledged_events", uint64(max(t.Unacknowledged, 0)))
		metrics.WriteGaugeFloat64(w, "changefeed_oldest_unacknowledged_age_seconds", t.OldestAge.Seconds())
	})
}

// helpTexts are the # HELP strings of svc's own metrics; the library
// writes the metric name alone.
var helpTexts = map[string]string{
	"http_requests_total":                          "HTTP requests served, by route template, method and status code.",
	"http_request_duration_seconds":                "HTTP request latency in seconds, by route template.",
	"http_requests_in_flight":                      "HTTP requests being served now.",
	"db_pool_max_connections":                      "Connection pool bound (SVC_POSTGRES_MAX_CONNS).",
	"db_pool_min_connections":                      "Connections the pool keeps open (SVC_POSTGRES_MIN_CONNS).",
	"db_pool_connections":                          "Open storage connections, including ones being opened.",
	"db_pool_idle_connections":                     "Open storage connections not in use.",
	"db_pool_in_use_connections":                   "Storage connections in use.",
	"db_pool_idle_closed_total":                    "Storage connections closed after SVC_POSTGRES_MAX_CONN_IDLE_TIME idle.",
	"changefeed_subscriptions":                     "Change-feed subscriptions stored, every tenant.",
	"changefeed_unacknowledged_events":             "Events durable subscriptions have not acknowledged, summed.",
	"changefeed_oldest_unacknowledged_age_seconds": "Age of the oldest event a durable subscription has not acknowledged.",
}

// metricHelp is the # HELP string of a metric: svc's own from helpTexts
// and opmetrics.Help, the runtime and process metrics (which the library
// writes without one, and promtool check metrics wants one) say where
// they come from.
func metricHelp(name string) string {
	if h, ok := helpTexts[name]; ok {
		return h
	}
	if h, ok := opmetrics.Help[name]; ok {
		return h
	}
	switch {
	case name == "go_cpus":
		return "Logical CPUs usable by the process (runtime.NumCPU)."
	case strings.HasPrefix(name, "go_memstats_"):
		return "Go runtime memory statistic " + name[len("go_memstats_"):] + " (runtime.MemStats)."
	case strings.HasPrefix(name, "go_"):
		return "Go runtime metric " + name[len("go_"):] + " (runtime/metrics)."
	case strings.HasPrefix(name, "process_"):
		return "Process metric " + name[len("process_"):] + " (Linux /proc and cgroup)."
	}
	return name + "."
}

// writeMetrics writes the process, runtime and HTTP metrics in the
// Prometheus text format, with help strings on svc's own metrics.
func (s *Server) writeMetrics(w io.Writer) {
	var b bytes.Buffer
	metrics.WriteProcessMetrics(&b)
	s.metrics.set.WritePrometheus(&b)
	for _, line := range bytes.SplitAfter(b.Bytes(), []byte("\n")) {
		line = promtoolName(line)
		if name, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			// The library writes "# HELP name" alone.
			if n := bytes.TrimSpace(name); bytes.IndexByte(n, ' ') < 0 {
				line = []byte("# HELP " + string(n) + " " + metricHelp(string(n)) + "\n")
			}
		}
		_, _ = w.Write(line)
	}
}

// runtimeRenames are runtime metrics the metrics library names *_count,
// which promtool check metrics refuses for a counter or gauge (issue 26).
var runtimeRenames = map[string]string{
	"go_cgo_calls_count": "go_cgo_calls_total",
	"go_gc_forced_count": "go_gc_forced_total",
	// A gauge named *_count reads as a histogram's or summary's count
	// to promtool (promlint: non-histogram metrics should not have the
	// _count suffix).
	"go_cpu_count": "go_cpus",
}

// promtoolName makes one line of the runtime and process metrics pass
// promtool's naming rules: the two runtime counters named *_count become
// *_total, and the process I/O totals the library types as gauges (they
// only grow) are typed counters.
func promtoolName(line []byte) []byte {
	for from, to := range runtimeRenames {
		for _, pfx := range []string{"", "# HELP ", "# TYPE "} {
			if rest, ok := bytes.CutPrefix(line, []byte(pfx+from)); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '{' || rest[0] == '\n') {
				return append([]byte(pfx+to), rest...)
			}
		}
	}
	if rest, ok := bytes.CutPrefix(line, []byte("# TYPE process_io_")); ok {
		if name, ok := bytes.CutSuffix(rest, []byte("_total gauge\n")); ok {
			return []byte("# TYPE process_io_" + string(name) + "_total counter\n")
		}
	}
	return line
}

// instrument counts and times every request of one route.
func (s *Server) instrument(route string, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	rm := s.metrics.forRoute(route)
	if t := s.deps.Telemetry; t != nil {
		return s.traced(t, route, rm, next)
	}
	return func(ctx *fasthttp.RequestCtx) {
		start := opmetrics.Now()
		s.metrics.inFlight.Add(1)
		defer func() {
			s.metrics.inFlight.Add(-1)
			rm.latency().Done(start)
			rm.counter(ctx.Method(), ctx.Response.StatusCode()).Inc()
		}()
		next(ctx)
	}
}

// adminHandler serves /livez, /readyz, /metrics and, with SVC_ADMIN_PPROF,
// /debug/pprof/ on the admin listener.
func (s *Server) adminHandler() fasthttp.RequestHandler {
	bearer := []byte("Bearer " + s.cfg.MetricsBearer)
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain; charset=utf-8")
		switch string(ctx.Path()) {
		case "/livez":
			ctx.SetBodyString("ok")
		case "/readyz":
			s.readyz(ctx)
		case "/metrics":
			if s.cfg.MetricsBearer != "" &&
				subtle.ConstantTimeCompare(ctx.Request.Header.Peek("Authorization"), bearer) != 1 {
				ctx.SetStatusCode(401)
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="svc metrics"`)
				ctx.SetBodyString("unauthorized")
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			s.writeMetrics(ctx.Response.BodyWriter())
		default:
			// Profiles expose internals (and a CPU profile costs CPU), so they
			// are served only when SVC_ADMIN_PPROF is set, and only here.
			if s.cfg.AdminPprof && bytes.HasPrefix(ctx.Path(), []byte("/debug/pprof")) {
				// The handler lists the profiles only at the bare path.
				if string(ctx.Path()) == "/debug/pprof/" {
					ctx.URI().SetPath("/debug/pprof")
				}
				pprofhandler.PprofHandler(ctx)
				return
			}
			ctx.SetStatusCode(404)
			ctx.SetBodyString("not found")
		}
	}
}

// readyz answers 200 "ready" or 503 "not ready", then one line each on
// the database and on cluster membership, so an operator sees which of
// the two holds the node back.
func (s *Server) readyz(ctx *fasthttp.RequestCtx) {
	dbOK := s.deps.Ready == nil || s.deps.Ready()
	memberOK, member := true, "membership: single node"
	if s.deps.Membership != nil {
		memberOK, member = s.deps.Membership()
	}
	db := "database: reachable"
	switch {
	case !dbOK:
		db = "database: unreachable"
	case s.cfg.StorageBackend == "memory":
		// No database to reach: say what holds the data instead.
		db = "storage: memory (no database)"
	}
	status := "ready"
	if s.draining.Load() || !dbOK || !memberOK {
		ctx.SetStatusCode(503)
		status = "not ready"
		if s.draining.Load() {
			status += " (draining)"
		}
	}
	ctx.SetBodyString(status + "\n" + db + "\n" + member + "\n")
}
