package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"svc/internal/await"
	"svc/storage/pgtest"
)

// scrape reads one metric's value from the admin listener's /metrics.
func scrape(t *testing.T, adminPort int, name string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", adminPort))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// TestPostgresPoolSettings serves on PostgreSQL and reads the pool back
// from /metrics: SVC_POSTGRES_MAX_CONNS is the pool's bound,
// SVC_POSTGRES_MIN_CONNS connections are opened with no traffic at all and
// none is closed as idle under the default idle time (5m), and with
// SVC_POSTGRES_MAX_CONN_IDLE_TIME=300ms (and no minimum) connections
// startup opened are closed as idle, counted in db_pool_idle_closed_total.
// Nothing but the scrapes talks to svc after startup.
func TestPostgresPoolSettings(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	dbURL := pgtest.New(t, "cmd_pool")
	run := func(env ...string) int {
		httpPort, adminPort := freePort(t), freePort(t)
		startServe(t, bin, adminPort, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
			fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true", "SVC_STORAGE_BACKEND=postgres",
			"SVC_POSTGRES_URL=" + dbURL}, env...)...)
		return adminPort
	}

	admin := run("SVC_POSTGRES_MAX_CONNS=7", "SVC_POSTGRES_MIN_CONNS=3")
	if got := scrape(t, admin, "db_pool_max_connections"); got != 7 {
		t.Errorf("db_pool_max_connections %v, want 7", got)
	}
	if got := scrape(t, admin, "db_pool_min_connections"); got != 3 {
		t.Errorf("db_pool_min_connections %v, want 3", got)
	}
	await.Until(t, await.Long, func() bool { return scrape(t, admin, "db_pool_connections") >= 3 }, "3 connections open")
	if got := scrape(t, admin, "db_pool_idle_closed_total"); got != 0 {
		t.Errorf("with the default idle time (5m) %v connections were closed as idle", got)
	}

	admin = run("SVC_POSTGRES_MIN_CONNS=0", "SVC_POSTGRES_MAX_CONN_IDLE_TIME=300ms")
	// Background loops (scheduler, reaper) may open a connection now and
	// then; the counter is what shows the idle time at work.
	await.Until(t, await.Long, func() bool { return scrape(t, admin, "db_pool_idle_closed_total") >= 1 }, "a connection closed as idle")
}

// TestAutoMigrateOffRefusesStaleSchema: with SVC_POSTGRES_AUTO_MIGRATE=false
// an empty database is not migrated and serve refuses to start with one
// line naming the setting and `svc migrate`; after `svc migrate` the same
// configuration serves. (The default, true, migrates at start: every other
// PostgreSQL test starts on an empty database.)
func TestAutoMigrateOffRefusesStaleSchema(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	dbURL := pgtest.New(t, "cmd_automig")
	httpPort, adminPort := freePort(t), freePort(t)
	env := []string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true", "SVC_STORAGE_BACKEND=postgres",
		"SVC_POSTGRES_URL=" + dbURL, "SVC_POSTGRES_AUTO_MIGRATE=false"}
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = t.TempDir(), cleanEnv(t, env...)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("serve on an empty database without migrations: %v\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	if strings.Contains(line, "\n") || !strings.Contains(line, "SVC_POSTGRES_AUTO_MIGRATE") || !strings.Contains(line, "svc migrate") {
		t.Fatalf("want one line naming SVC_POSTGRES_AUTO_MIGRATE and svc migrate, got:\n%s", out)
	}

	mig := exec.Command(bin, "migrate")
	mig.Dir, mig.Env = t.TempDir(), cleanEnv(t, env...)
	// The refused start applied nothing: migrate finds every migration pending.
	if out, err := mig.CombinedOutput(); err != nil || !strings.Contains(string(out), "migrations applied: ") ||
		strings.Contains(string(out), "migrations applied: 0 ") {
		t.Fatalf("svc migrate: %v\n%s", err, out)
	}
	startServe(t, bin, adminPort, env...)
	if st, body := apiCall(t, fmt.Sprintf("http://127.0.0.1:%d/api", httpPort), "GET", "/model/", ""); st != 200 {
		t.Fatalf("after svc migrate: GET /model/ %d %s", st, body)
	}
}
