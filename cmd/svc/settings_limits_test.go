package main

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/internal/await"
)

// TestSearchAndStatsLimits serves with SVC_SEARCH_MAX_SORT_KEYS=2 and
// SVC_STATS_GROUP_MAX=2: a search with three sort keys is refused where two
// are served, a grouped-stats limit above 2 is refused, and a grouping into
// three groups exceeds the cardinality cap, where two groups answer. The
// same requests pass under the defaults (16 keys, 10000 groups).
func TestSearchAndStatsLimits(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	start := func(env ...string) string {
		httpPort, adminPort := freePort(t), freePort(t)
		startServe(t, bin, adminPort, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
			fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true"}, env...)...)
		base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
		if st, body := apiCall(t, base, "POST", "/model/import/JSON/SAMPLE_DATA/lim/1", `{"a":1,"b":1,"c":1,"g":1}`); st != 200 {
			t.Fatalf("import: %d %s", st, body)
		}
		if st, body := apiCall(t, base, "PUT", "/model/lim/1/lock", ""); st != 200 {
			t.Fatalf("lock: %d %s", st, body)
		}
		for i := range 3 {
			if st, body := apiCall(t, base, "POST", "/entity/JSON/lim/1", fmt.Sprintf(`{"a":%d,"b":1,"c":1,"g":%d}`, i, i)); st != 200 {
				t.Fatalf("create: %d %s", st, body)
			}
		}
		return base
	}
	all := `{"type":"simple","jsonPath":"$.b","operatorType":"EQUALS","value":1}`
	twoGroups := `{"type":"simple","jsonPath":"$.g","operatorType":"LESS_THAN","value":2}`
	type check struct {
		what, path, body string
		status           int
		has              string
	}
	run := func(base string, checks []check) {
		t.Helper()
		for _, c := range checks {
			if st, body := apiCall(t, base, "POST", c.path, c.body); st != c.status || !strings.Contains(body, c.has) {
				t.Errorf("%s: %d %s, want %d with %q", c.what, st, body, c.status, c.has)
			}
		}
	}

	run(start("SVC_SEARCH_MAX_SORT_KEYS=2", "SVC_STATS_GROUP_MAX=2"), []check{
		{"two sort keys", "/search/direct/lim/1?sort=a&sort=b", all, 200, `"a":0`},
		{"three sort keys", "/search/direct/lim/1?sort=a&sort=b&sort=c", all, 400, "max 2"},
		{"two groups", "/entity/stats/lim/1/query", `{"groupBy":["$.g"],"condition":` + twoGroups + `}`, 200, `"count":1`},
		{"three groups", "/entity/stats/lim/1/query", `{"groupBy":["$.g"]}`, 422, "GROUP_CARDINALITY_EXCEEDED"},
		{"limit 3", "/entity/stats/lim/1/query", `{"groupBy":["$.g"],"limit":3}`, 400, "INVALID_LIMIT"},
	})
	run(start(), []check{
		{"default: three sort keys", "/search/direct/lim/1?sort=a&sort=b&sort=c", all, 200, `"a":0`},
		{"default: three groups", "/entity/stats/lim/1/query", `{"groupBy":["$.g"]}`, 200, `"count":1`},
		{"default: limit 3", "/entity/stats/lim/1/query", `{"groupBy":["$.g"],"limit":3}`, 200, `"count":1`},
	})
}

// TestBindAddresses binds the admin, HTTP and gRPC listeners to 127.0.0.2
// (SVC_ADMIN_BIND_ADDRESS, SVC_HTTP_BIND_ADDRESS, SVC_GRPC_BIND_ADDRESS):
// each answers there and refuses connections on 127.0.0.1, the banner
// says where the listeners bind, and `svc health` with the same settings
// finds the admin listener.
func TestBindAddresses(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skip("no 127.0.0.2 on this host")
	} else {
		ln.Close()
	}
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	env := []string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_ADMIN_BIND_ADDRESS=127.0.0.2", "SVC_HTTP_BIND_ADDRESS=127.0.0.2", "SVC_GRPC_BIND_ADDRESS=127.0.0.2"}
	_, stderr := launchServe(t, bin, env...)
	ready := fmt.Sprintf("http://127.0.0.2:%d/readyz", adminPort)
	await.Value(t, 60*time.Second, func() (string, bool) {
		resp, err := http.Get(ready)
		if err != nil {
			return err.Error(), false
		}
		resp.Body.Close()
		return resp.Status, resp.StatusCode == 200
	}, "admin listener on 127.0.0.2 ready")
	if !stderr.waitFor("listening on 127.0.0.2 (HTTP, SVC_HTTP_BIND_ADDRESS) and 127.0.0.2 (gRPC, SVC_GRPC_BIND_ADDRESS)") {
		t.Errorf("banner:\n%s", stderr.String())
	}
	if st, _ := apiCall(t, fmt.Sprintf("http://127.0.0.2:%d/api", httpPort), "GET", "/health", ""); st != 200 {
		t.Errorf("API on 127.0.0.2: %d", st)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.2:%d", grpcPort), 10*time.Second); err != nil {
		t.Errorf("gRPC on 127.0.0.2: %v", err)
	} else {
		c.Close()
	}
	for name, port := range map[string]int{"admin": adminPort, "API": httpPort, "gRPC": grpcPort} {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second); err == nil {
			c.Close()
			t.Errorf("%s listener answers on 127.0.0.1 too", name)
		}
	}
	health := exec.Command(bin, "health")
	health.Dir, health.Env = t.TempDir(), cleanEnv(t, env...)
	if out, err := health.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("svc health: %v %q", err, out)
	}
}

// TestSuppressBanner: the banner is on stderr by default and absent with
// SVC_SUPPRESS_BANNER=true, for a whole run from start to shutdown.
func TestSuppressBanner(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	run := func(env ...string) string {
		adminPort := freePort(t)
		cmd, stderr := launchServe(t, bin, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)),
			fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t))}, env...)...)
		waitReady(t, adminPort)
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
		return stderr.String()
	}
	const banner = "svc 9.9.9-test (abc123)"
	if out := run(); !strings.Contains(out, banner) || !strings.Contains(out, "MOCK AUTH IS ACTIVE") {
		t.Errorf("default: no banner on stderr:\n%s", out)
	}
	if out := run("SVC_SUPPRESS_BANNER=true"); strings.Contains(out, banner) || strings.Contains(out, "MOCK AUTH") {
		t.Errorf("SVC_SUPPRESS_BANNER=true: banner printed:\n%s", out)
	}
}
