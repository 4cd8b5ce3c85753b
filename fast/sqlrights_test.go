package fast

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSQLRightsNotRevoked (issue 23 item 2): when svc's database still
// grants PUBLIC a right migrations 0034 or 0035 take back (svc's role
// was no superuser when they ran, so PostgreSQL only warned), saving a
// SQL schema answers 503 SQL_ROLE_RIGHTS_NOT_REVOKED naming the right
// and the migrations an operator applies as a superuser, and saves
// nothing. Before, the refusal was a bare 500.
func TestSQLRightsNotRevoked(t *testing.T) {
	t.Parallel()
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	su := env.superuser(t)
	for _, tc := range []struct{ grant, revoke, left string }{
		{"GRANT SELECT ON pg_catalog.pg_class TO PUBLIC", "REVOKE SELECT ON pg_catalog.pg_class FROM PUBLIC", "SELECT ON pg_catalog.pg_class"},
		{"GRANT EXECUTE ON FUNCTION pg_catalog.pg_get_viewdef(oid) TO PUBLIC", "REVOKE EXECUTE ON FUNCTION pg_catalog.pg_get_viewdef(oid) FROM PUBLIC",
			"EXECUTE ON FUNCTION pg_get_viewdef(oid)"},
	} {
		t.Run(tc.left, func(t *testing.T) {
			ctx := context.Background()
			if _, err := su.Exec(ctx, tc.grant); err != nil {
				t.Fatal(err)
			}
			defer su.Exec(ctx, tc.revoke)
			p := env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).problem(t, 503, "SQL_ROLE_RIGHTS_NOT_REVOKED")
			if left := fmt.Sprint(p["left"]); !strings.Contains(left, tc.left) {
				t.Errorf("left %s, want %q among them", left, tc.left)
			}
			if m := fmt.Sprint(p["migrations"]); !strings.Contains(m, "0034_sql_tenant_hardening.sql") || !strings.Contains(m, "0035_sql_catalog_private.sql") {
				t.Errorf("migrations %s", m)
			}
			list, err := env.sql.List(ctx, "A")
			if err != nil || len(list) != 0 {
				t.Fatalf("saved anyway: %v %v", list, err)
			}
		})
	}
	// With the right taken back, the same save succeeds.
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
}
