package fast

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSQLQueryAdvisoryLocksRefused (issue 23 item 1, over HTTP): every
// advisory-lock function form sent to POST {ctx}/sql/query is refused
// with 400 SQL_ERROR (sqlState 42501), and svc's migration lock and
// another tenant's trusted-key lock stay free after each request.
func TestSQLQueryAdvisoryLocksRefused(t *testing.T) {
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	ctx := context.Background()
	svc, err := pgx.Connect(ctx, env.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	for _, try := range []string{"", "try_"} {
		for _, x := range []string{"", "xact_"} {
			for _, shared := range []string{"", "_shared"} {
				fn := "pg_" + try + "advisory_" + x + "lock" + shared
				// 91629961431367 is the migration lock key (0x5356434d4947, storage/postgres migrate.go).
				for _, args := range []string{"91629961431367::bigint", "hashtext('svc.iam_keypair.rotate'), hashtext('a')"} {
					t.Run(fn+"("+args+")", func(t *testing.T) {
						p := env.queryResp("A", "shop", "SELECT "+fn+"("+args+")::text").problem(t, 400, "SQL_ERROR")
						if p["sqlState"] != "42501" {
							t.Fatalf("%s: %v, want permission denied (42501)", fn, p)
						}
						cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
						defer cancel()
						var free bool
						if err := svc.QueryRow(cctx, "SELECT pg_try_advisory_lock(91629961431367::bigint) AND pg_try_advisory_lock(hashtextextended('trusted:B', 0)) AND pg_try_advisory_lock(hashtext('svc.iam_keypair.rotate'), hashtext('a'))").Scan(&free); err != nil || !free {
							t.Fatalf("svc's locks after the request: free=%v %v", free, err)
						}
						if _, err := svc.Exec(cctx, "SELECT pg_advisory_unlock_all()"); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
	}
}
