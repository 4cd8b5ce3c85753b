package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"svc/storage/pgtest"
)

// freshMetricsBound is the most bytes /metrics of a fresh PostgreSQL node
// may carry (issue 26 item 6: it was 120 KB of mostly zero series). Fresh
// it is the runtime, process, pool and change-feed figures, 16.4 KiB with
// their help texts; request, storage, dispatch and gRPC series appear
// with their first sample.
const freshMetricsBound = 20 << 10

// TestMetricsPassPromlint scrapes /metrics of the real binary on
// PostgreSQL, fresh and after requests that create series (HTTP, storage),
// and runs it through promlint, the linter of `promtool check metrics`:
// no problem at all. The fresh scrape stays under freshMetricsBound.
func TestMetricsPassPromlint(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.New(t, "metrics")
	httpPort, adminPort := freePort(t), freePort(t)
	startServe(t, svcBinary(t), adminPort, "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+dbURL,
		fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true")
	scrape := func() []byte {
		t.Helper()
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", adminPort))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
		}
		return b
	}
	lint := func(when string, body []byte) {
		t.Helper()
		problems, err := promlint.New(bytes.NewReader(body)).Lint()
		if err != nil {
			t.Fatalf("%s: promlint cannot read /metrics: %v", when, err)
		}
		for _, p := range problems {
			t.Errorf("%s: promlint: %s: %s", when, p.Metric, p.Text)
		}
	}
	fresh := scrape()
	t.Logf("/metrics of a fresh node: %d bytes", len(fresh))
	if len(fresh) > freshMetricsBound {
		t.Errorf("/metrics of a fresh node is %d bytes, above %d:\n%s", len(fresh), freshMetricsBound, fresh)
	}
	lint("fresh", fresh)

	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"amount":1}`},
		{"PUT", "/model/order/1/lock", ""},
		{"POST", "/entity/JSON/order/1", `{"amount":2}`},
		{"GET", "/help", ""},
	} {
		if code, body := apiCall(t, base, c.method, c.path, c.body); code != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
	apiCall(t, base, "GET", "/entity/00000000-0000-4000-8000-000000000000", "")
	after := scrape()
	for _, want := range []string{"http_request_duration_seconds_bucket", "http_requests_total", "svc_storage_operation_duration_seconds_bucket"} {
		if !bytes.Contains(after, []byte(want)) {
			t.Errorf("after requests /metrics lacks %s", want)
		}
	}
	lint("after requests", after)
}
