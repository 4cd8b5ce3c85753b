package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage/pgtest"
)

// TestSQLQueryTimeout serves on PostgreSQL with SVC_SQL_QUERY_TIMEOUT=500ms:
// POST /sql/query of a statement that sleeps 3 s is cancelled by the
// statement timeout (400 SQL_ERROR naming it), which the default 30 s would
// have let finish, and a session opened with the schema's own login (what
// psql and BI tools use) carries the same statement_timeout. A 1 s sleep
// under the default completes, so the cancellation is the setting's. The
// sleep is pg_sleep, which PostgreSQL lets every role run; no view over a
// slow function is needed.
func TestSQLQueryTimeout(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	start := func(dbURL string, env ...string) string {
		httpPort, adminPort := freePort(t), freePort(t)
		startServe(t, bin, adminPort, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
			fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true", "SVC_STORAGE_BACKEND=postgres",
			"SVC_POSTGRES_URL=" + dbURL}, env...)...)
		base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
		if st, body := apiCall(t, base, "PUT", "/sql/schema/putDefault/ops", ""); st != 200 {
			t.Fatalf("putDefault: %d %s", st, body)
		}
		return base
	}
	sleep := func(base string, secs int) (int, string) {
		t.Helper()
		return apiCall(t, base, "POST", "/sql/query", fmt.Sprintf(`{"schemaName":"ops","sql":"SELECT pg_sleep(%d) AS slept"}`, secs))
	}

	dbURL := pgtest.New(t, "cmd_sqltimeout")
	short := start(dbURL, "SVC_SQL_QUERY_TIMEOUT=500ms")
	if st, body := sleep(short, 3); st != 400 || !strings.Contains(body, "SQL_ERROR") || !strings.Contains(body, "statement timeout") {
		t.Errorf("3 s statement under a 500ms timeout: %d %s, want 400 SQL_ERROR (statement timeout)", st, body)
	}
	st, body := apiCall(t, short, "GET", "/sql/credentials?schemaName=ops", "")
	if st != 200 {
		t.Fatalf("credentials: %d %s", st, body)
	}
	var login struct{ Role, Password, Schema, Database string }
	if err := json.Unmarshal([]byte(body), &login); err != nil || login.Role == "" {
		t.Fatalf("credentials: %v %s", err, body)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(login.Role, login.Password)
	u.Path = "/" + login.Database // the schema's own
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("connecting as the schema role: %v", err)
	}
	defer conn.Close(context.Background())
	var got string
	if err := conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil || got != "500ms" {
		t.Errorf("schema role session: statement_timeout %q (%v), want 500ms", got, err)
	}

	def := start(pgtest.New(t, "cmd_sqltimeout_def"))
	if st, body := sleep(def, 1); st != 200 || !strings.Contains(body, `"slept"`) {
		t.Errorf("1 s statement under the default timeout: %d %s, want 200", st, body)
	}
}
