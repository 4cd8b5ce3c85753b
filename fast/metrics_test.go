package fast

import (
	"bytes"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/valyala/fasthttp"

	"svc/platform/config"
	"svc/storage"
)

func adminGet(s *Server, path string) *fasthttp.Response {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(path)
	s.adminHandler()(&ctx)
	var r fasthttp.Response
	ctx.Response.CopyTo(&r)
	return &r
}

// TestMetricsParseAsPrometheusText reads /metrics with Prometheus's own
// text-format parser: typed families with help, a real histogram per route
// template, counters by route template, method and status.
func TestMetricsParseAsPrometheusText(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	do(s, "GET", "/api/help")
	do(s, "GET", "/api/help/cli")
	do(s, "GET", "/api/help/no-such-topic")
	do(s, "BREW", "/api/entity/9b2a3c4d-0000-4000-8000-000000000000")
	r := adminGet(s, "/metrics")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.Body()))
	if err != nil {
		t.Fatalf("Prometheus cannot parse /metrics: %v", err)
	}
	want := map[string]dto.MetricType{
		"http_requests_total":           dto.MetricType_COUNTER,
		"http_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"http_requests_in_flight":       dto.MetricType_GAUGE,
		"go_goroutines":                 dto.MetricType_GAUGE,
	}
	for name, typ := range want {
		f := fams[name]
		if f == nil {
			t.Errorf("no family %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s: type %s, want %s", name, f.GetType(), typ)
		}
		if strings.HasPrefix(name, "http_") && f.GetHelp() == "" {
			t.Errorf("%s: no help text", name)
		}
	}
	counts := map[string]float64{}
	for _, m := range fams["http_requests_total"].GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		counts[l["route"]+" "+l["method"]+" "+l["status"]] += m.GetCounter().GetValue()
		if strings.Contains(l["route"], "cli") || strings.Contains(l["route"], "9b2a") {
			t.Errorf("raw path in a route label: %v", l)
		}
	}
	for k, n := range map[string]float64{"/help GET 200": 1, "/help/{topic} GET 200": 1, "/help/{topic} GET 404": 1, "unmatched OTHER 405": 1} {
		if counts[k] != n {
			t.Errorf("%s: %v (all: %v)", k, counts[k], counts)
		}
	}
	var hist *dto.Histogram
	for _, m := range fams["http_request_duration_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "route" && lp.GetValue() == "/help/{topic}" {
				hist = m.GetHistogram()
			}
		}
	}
	if hist == nil || hist.GetSampleCount() != 2 || len(hist.GetBucket()) < 5 {
		t.Fatalf("histogram of /help/{topic}: %v", hist)
	}
}

// TestAdminPprofSwitch: profiles only with SVC_ADMIN_PPROF.
func TestAdminPprofSwitch(t *testing.T) {
	t.Parallel()
	if r := adminGet(newTestServer(t), "/debug/pprof/"); r.StatusCode() != 404 {
		t.Fatalf("pprof without the switch: %d", r.StatusCode())
	}
	s := newTestServer(t, func(c *config.Config) { c.AdminPprof = true })
	if r := adminGet(s, "/debug/pprof/"); r.StatusCode() != 200 || !strings.Contains(string(r.Body()), "goroutine") {
		t.Fatalf("pprof index: %d %.100s", r.StatusCode(), r.Body())
	}
	if r := adminGet(s, "/debug/pprof/goroutine?debug=1"); r.StatusCode() != 200 || !strings.Contains(string(r.Body()), "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.100s", r.StatusCode(), r.Body())
	}
}

// TestPoolMetricsTyped: with a storage pool the pool's figures are typed
// families Prometheus reads (gauges, and the idle-close counter).
func TestPoolMetricsTyped(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Pool: func() storage.PoolStats {
		return storage.PoolStats{Max: 7, Min: 3, Total: 4, Idle: 3, InUse: 1, IdleClosed: 2}
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(adminGet(s, "/metrics").Body()))
	if err != nil {
		t.Fatalf("Prometheus cannot parse /metrics: %v", err)
	}
	for name, want := range map[string]float64{"db_pool_max_connections": 7, "db_pool_min_connections": 3, "db_pool_connections": 4,
		"db_pool_idle_connections": 3, "db_pool_in_use_connections": 1, "db_pool_idle_closed_total": 2} {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 || f.GetHelp() == "" {
			t.Errorf("%s: %v", name, f)
			continue
		}
		m := f.GetMetric()[0]
		got, typ := m.GetGauge().GetValue(), dto.MetricType_GAUGE
		if strings.HasSuffix(name, "_total") {
			got, typ = m.GetCounter().GetValue(), dto.MetricType_COUNTER
		}
		if f.GetType() != typ || got != want {
			t.Errorf("%s: %s %v, want %s %v", name, f.GetType(), got, typ, want)
		}
	}
	if fams := adminGet(newTestServer(t), "/metrics"); bytes.Contains(fams.Body(), []byte("db_pool_")) {
		t.Error("pool metrics without a pool")
	}
}
