package fast

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// promName is Prometheus's metric name rule (the data model's
// [a-zA-Z_:][a-zA-Z0-9_:]*); promtool check metrics also wants counters,
// and only counters, to end in _total.
var promName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// TestMetricNamesPassPromtoolRules (issue 26): every family on /metrics,
// the Go runtime's included, has a valid name, a counter ends in _total
// and nothing else does.
func TestMetricNamesPassPromtoolRules(t *testing.T) {
	s := newTestServer(t)
	do(s, "GET", "/api/help")
	body := adminGet(s, "/metrics").Body()
	types := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	if len(types) == 0 {
		t.Fatal("no # TYPE lines on /metrics")
	}
	for name, typ := range types {
		if !promName.MatchString(name) {
			t.Errorf("%s: not a valid Prometheus metric name", name)
		}
		if total := strings.HasSuffix(name, "_total"); total != (typ == "counter") {
			t.Errorf("%s: type %s; promtool wants counters, and only counters, named *_total", name, typ)
		}
	}
}

// TestMetricsOmitUncalledRoutes (issue 26): a route nobody called exports
// no series; the one called does.
func TestMetricsOmitUncalledRoutes(t *testing.T) {
	s := newTestServer(t)
	do(s, "GET", "/api/help")
	body := string(adminGet(s, "/metrics").Body())
	if !strings.Contains(body, `http_request_duration_seconds_count{route="/help"} 1`) {
		t.Errorf("the called route has no latency series:\n%s", body)
	}
	if strings.Contains(body, `route="/entity/{entityId}"`) {
		t.Error("a route never called exports series")
	}
}
