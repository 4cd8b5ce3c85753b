package fast

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/storage"
)

const ordersSample = `{"orderId":"A-1","customer":{"name":"Ann","tier":2},"tags":["new","vip"],"lines":[{"sku":"X1","qty":2,"price":9.5,"discounts":[{"code":"D10","pct":10}]},{"sku":"Y2","qty":1,"price":20}],"grid":[[1,2],[3,4]]}`

// query runs POST /sql/query and returns the NDJSON rows, each re-encoded
// compactly with its keys in column order.
func (e *sqlEnv) query(tenant, schema, sql string, pointTime ...string) []string {
	e.t.Helper()
	r := e.queryResp(tenant, schema, sql, pointTime...).ok(e.t)
	if r.ctype != "application/x-ndjson" {
		e.t.Fatalf("content type %q", r.ctype)
	}
	var rows []string
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		rows = append(rows, sc.Text())
	}
	return rows
}

func (e *sqlEnv) queryResp(tenant, schema, sql string, pointTime ...string) entityResp {
	e.t.Helper()
	req := map[string]string{"schemaName": schema, "sql": sql}
	if len(pointTime) > 0 {
		req["pointTime"] = pointTime[0]
	}
	b, _ := json.Marshal(req)
	return e.call(tenant, "POST", "/sql/query", b)
}

func wantRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestSQLViewsPostgres covers the views through POST /sql/query (docs/decisions/0024-sql-schema.md,
// on real rows): the orders example's tables and
// rows, a root/array join, an as-of read, the mixed-depth and 3-D
// samples, SQL errors, and that neither base tables nor another tenant's
// rows are reachable.
func TestSQLViewsPostgres(t *testing.T) {
	t.Parallel()
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	e1, _ := env.create("A", "orders", 1, ordersSample)
	e2, _ := env.create("A", "orders", 1, `{"orderId":"B-2","customer":{"name":"Bob","tier":1},"tags":["x"],"lines":[{"sku":"Z9","qty":5,"price":1.25}],"grid":[[7,8]]}`)
	env.lockedModel("B", "orders", 1, ordersSample)
	env.create("B", "orders", 1, `{"orderId":"SECRET","customer":{"name":"Eve","tier":9},"tags":[],"lines":[{"sku":"S","qty":1,"price":1}],"grid":[]}`)
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	env.call("B", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)

	t.Run("worked example rows", func(t *testing.T) {
		wantRows(t, "views", env.query("A", "shop", `SELECT table_name FROM information_schema.views WHERE table_schema = current_schema() ORDER BY 1`),
			`{"table_name":"orders"}`, `{"table_name":"orders_grid_array"}`, `{"table_name":"orders_json"}`,
			`{"table_name":"orders_lines"}`, `{"table_name":"orders_lines_discounts"}`)
		q := fmt.Sprintf(`SELECT index_0, price, qty, sku FROM orders_lines WHERE entity_id = '%s' ORDER BY index_0`, e1)
		wantRows(t, "orders_lines", env.query("A", "shop", q),
			`{"index_0":0,"price":9.5,"qty":2,"sku":"X1"}`, `{"index_0":1,"price":20,"qty":1,"sku":"Y2"}`)
		q = fmt.Sprintf(`SELECT index_0, index_1, code, pct FROM orders_lines_discounts WHERE entity_id = '%s'`, e1)
		wantRows(t, "discounts", env.query("A", "shop", q), `{"index_0":0,"index_1":0,"code":"D10","pct":10}`)
		q = fmt.Sprintf(`SELECT index_0, element_0, element_1 FROM orders_grid_array WHERE entity_id = '%s' ORDER BY 1`, e1)
		wantRows(t, "grid", env.query("A", "shop", q), `{"index_0":0,"element_0":1,"element_1":2}`, `{"index_0":1,"element_0":3,"element_1":4}`)
		q = fmt.Sprintf(`SELECT customer_name, customer_tier, orderid, tags_array, state, entity_id::text = '%s' AS me FROM orders WHERE entity_id = '%s'`, e1, e1)
		wantRows(t, "root", env.query("A", "shop", q), `{"customer_name":"Ann","customer_tier":2,"orderid":"A-1","tags_array":["new","vip"],"state":"CREATED","me":true}`)
		q = fmt.Sprintf(`SELECT entity->'customer'->>'name' AS n, jsonb_typeof(entity) AS t FROM orders_json WHERE entity_id = '%s'`, e2)
		wantRows(t, "json table", env.query("A", "shop", q), `{"n":"Bob","t":"object"}`)
	})

	t.Run("root and array join", func(t *testing.T) {
		q := `SELECT o.orderid, l.sku, l.qty FROM orders o JOIN orders_lines l ON l.entity_id = o.entity_id ORDER BY o.orderid, l.index_0`
		wantRows(t, "join", env.query("A", "shop", q),
			`{"orderid":"A-1","sku":"X1","qty":2}`, `{"orderid":"A-1","sku":"Y2","qty":1}`, `{"orderid":"B-2","sku":"Z9","qty":5}`)
		r := env.call("A", "POST", "/sql/query", []byte(`{"schemaName":"shop","sql":"SELECT orderid, count(*) AS n FROM orders o JOIN orders_lines l USING (entity_id) GROUP BY 1 ORDER BY 1"}`),
			"Accept", "text/csv").ok(t)
		if r.ctype != "text/csv; charset=utf-8" || string(r.body) != "orderid,n\nA-1,2\nB-2,1\n" {
			t.Fatalf("csv %q %q", r.ctype, r.body)
		}
	})

	t.Run("as of", func(t *testing.T) {
		before := time.Now().UTC()
		time.Sleep(5 * time.Millisecond)
		env.call("A", "PUT", "/entity/JSON/"+e2, []byte(`{"orderId":"B-2","customer":{"name":"Bob","tier":1},"tags":["x"],"lines":[{"sku":"Z9","qty":6,"price":1.25},{"sku":"Z8","qty":1,"price":2}],"grid":[[7,8]]}`)).ok(t)
		q := fmt.Sprintf(`SELECT sku, qty FROM orders_lines WHERE entity_id = '%s' ORDER BY index_0`, e2)
		wantRows(t, "now", env.query("A", "shop", q), `{"sku":"Z9","qty":6}`, `{"sku":"Z8","qty":1}`)
		wantRows(t, "as of before the update", env.query("A", "shop", q, before.Format(time.RFC3339Nano)), `{"sku":"Z9","qty":5}`)
		// One setting moves every view of the query.
		q = fmt.Sprintf(`SELECT count(*) AS n, min(o.last_update_date) < '%s' AS old FROM orders o JOIN orders_lines l USING (entity_id) WHERE o.entity_id = '%s'`,
			before.Format(time.RFC3339Nano), e2)
		wantRows(t, "join as of", env.query("A", "shop", q, before.Format(time.RFC3339Nano)), `{"n":1,"old":true}`)
		wantRows(t, "before any entity", env.query("A", "shop", `SELECT count(*) AS n FROM orders`, "2000-01-01T00:00:00Z"), `{"n":0}`)
	})

	t.Run("errors and isolation", func(t *testing.T) {
		p := env.queryResp("A", "shop", "SELEC 1").problem(t, 400, "SQL_ERROR")
		if p["sqlState"] != "42601" {
			t.Fatalf("syntax error properties %v", p)
		}
		// svc's tables are not in the schema's own database at all.
		r := env.queryResp("A", "shop", "SELECT count(*) FROM public.entities")
		r.problem(t, 400, "SQL_ERROR")
		if !strings.Contains(string(r.body), "does not exist") {
			t.Fatalf("base table: %s", r.body)
		}
		env.queryResp("A", "shop", "SELECT 1; SELECT 2").problem(t, 400, "SQL_ERROR")
		env.queryResp("A", "shop", "CREATE TABLE x (a int)").problem(t, 400, "SQL_ERROR")
		env.queryResp("A", "nope", "SELECT 1").problem(t, 404, "NOT_FOUND")
		// Tenant B's view schema is out of A's reach, and A's views never
		// show B's rows.
		var lb storage.SQLLogin
		env.call("B:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &lb)
		r = env.queryResp("A", "shop", "SELECT orderid FROM "+lb.Schema+".orders")
		r.problem(t, 400, "SQL_ERROR")
		if !strings.Contains(string(r.body), "does not exist") {
			t.Fatalf("other tenant's schema: %s", r.body)
		}
		wantRows(t, "A sees no B rows", env.query("A", "shop", `SELECT count(*) AS n FROM orders WHERE orderid = 'SECRET'`), `{"n":0}`)
		wantRows(t, "B sees its own", env.query("B", "shop", `SELECT orderid FROM orders`), `{"orderid":"SECRET"}`)
		env.call("A", "GET", "/sql/credentials?schemaName=shop", nil).problem(t, 403, "FORBIDDEN")
	})

	t.Run("hidden tables and fields get no view or column", func(t *testing.T) {
		var def struct {
			Tables []map[string]any `json:"tables"`
		}
		env.call("A", "GET", "/sql/schema/?schemaName=shop", nil).ok(t).decode(t, &def)
		for _, tb := range def.Tables {
			switch tb["uniformedPath"] {
			case "$.lines[*].discounts[*]":
				tb["hidden"] = true
			case "$":
				for _, f := range tb["fields"].([]any) {
					if fm := f.(map[string]any); fm["fieldKey"] == ".orderId" {
						fm["hidden"] = true
					}
				}
			}
		}
		b, _ := json.Marshal(map[string]any{"schemaName": "slim", "tables": def.Tables})
		env.call("A", "POST", "/sql/schema/", b).ok(t)
		wantRows(t, "views", env.query("A", "slim", `SELECT table_name FROM information_schema.views WHERE table_schema = current_schema() ORDER BY 1`),
			`{"table_name":"orders"}`, `{"table_name":"orders_grid_array"}`, `{"table_name":"orders_json"}`, `{"table_name":"orders_lines"}`)
		env.queryResp("A", "slim", `SELECT orderid FROM orders`).problem(t, 400, "SQL_ERROR")
		var kept sqlschemaConfigForTest
		env.call("A", "GET", "/sql/schema/?schemaName=slim", nil).ok(t).decode(t, &kept)
		if len(kept.Tables) != 5 {
			t.Fatalf("hidden tables stay in the configuration: %d", len(kept.Tables))
		}
		// Deleting the schema drops its database (views) and its role.
		var l storage.SQLLogin
		env.call("A:admin", "GET", "/sql/credentials?schemaName=slim", nil).ok(t).decode(t, &l)
		env.call("A", "DELETE", "/sql/schema/?schemaName=slim", nil).ok(t)
		wantRows(t, "dropped", env.query("A", "shop", `SELECT (SELECT count(*) FROM pg_database WHERE datname = '`+l.Database+`') AS databases, (SELECT count(*) FROM pg_roles WHERE rolname = '`+l.Role+`') AS roles`),
			`{"databases":0,"roles":0}`)
	})

	t.Run("mixed depth and 3-D", func(t *testing.T) {
		env.lockedModel("A", "mixed", 1, `{"data":[1,[2,3],[4,5,[6,7],[8,9]]],"cube":[[[1,2],[3,4]],[[5,6],[7,8]]]}`)
		env.create("A", "mixed", 1, `{"data":[1,[2,3],[4,5,[6,7],[8,9]]],"cube":[[[1,2],[3,4]],[[5,6],[7,8]]]}`)
		env.call("A", "PUT", "/sql/schema/putDefault/mixed", nil).ok(t)
		wantRows(t, "data_2d_array", env.query("A", "mixed", `SELECT index_0, index_1, element_0, element_1 FROM mixed_data_2d_array ORDER BY 1, 2`),
			`{"index_0":2,"index_1":2,"element_0":6,"element_1":7}`, `{"index_0":2,"index_1":3,"element_0":8,"element_1":9}`)
		wantRows(t, "cube", env.query("A", "mixed", `SELECT index_0, index_1, element_0, element_1 FROM mixed_cube_2d_array ORDER BY 1, 2`),
			`{"index_0":0,"index_1":0,"element_0":1,"element_1":2}`, `{"index_0":0,"index_1":1,"element_0":3,"element_1":4}`,
			`{"index_0":1,"index_1":0,"element_0":5,"element_1":6}`, `{"index_0":1,"index_1":1,"element_0":7,"element_1":8}`)
	})

	t.Run("model change keeps views working", func(t *testing.T) {
		env.call("A", "POST", "/model/orders/1/changeLevel/STRUCTURAL", nil).ok(t)
		env.create("A", "orders", 1, `{"orderId":"C-3","customer":{"name":"Cy","tier":"gold"},"extra":true,"tags":[],"lines":[{"sku":"Q","qty":1.5,"price":3}],"grid":[]}`)
		// The saved schema keeps its columns; an odd value reads as NULL.
		wantRows(t, "widened", env.query("A", "shop", `SELECT orderid, customer_tier FROM orders ORDER BY orderid`),
			`{"orderid":"A-1","customer_tier":2}`, `{"orderid":"B-2","customer_tier":1}`, `{"orderid":"C-3","customer_tier":null}`)
		wantRows(t, "widened lines", env.query("A", "shop", `SELECT sku, qty FROM orders_lines WHERE sku = 'Q'`), `{"sku":"Q","qty":null}`)
	})

	t.Run("psql as the schema role", func(t *testing.T) {
		psql, err := exec.LookPath("psql")
		if err != nil {
			t.Skip("psql not installed")
		}
		var l storage.SQLLogin
		env.call("A:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &l)
		var again storage.SQLLogin
		env.call("A:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &again)
		if l.Role == "" || l.Password == "" || again != l {
			t.Fatalf("credentials %+v then %+v", l, again)
		}
		run := func(sql string) (string, error) {
			cmd := exec.Command(psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", l.Role, "-d", l.Database, "-c", sql)
			cmd.Env = append(cmd.Environ(), "PGPASSWORD="+l.Password)
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		must := func(sql, want string) {
			t.Helper()
			out, err := run(sql)
			if err != nil || out != want {
				t.Fatalf("psql %q: %v\n%s\nwant %s", sql, err, out, want)
			}
		}
		refused := func(sql, why string) {
			t.Helper()
			out, err := run(sql)
			if err == nil || !strings.Contains(out, why) {
				t.Fatalf("psql %q must fail with %q: %v\n%s", sql, why, err, out)
			}
		}
		must(`SELECT count(*) FROM orders`, "3")
		must(`SELECT o.orderid || ':' || l.sku FROM orders o JOIN orders_lines l USING (entity_id) WHERE o.orderid = 'A-1' ORDER BY l.index_0`, "A-1:X1\nA-1:Y2")
		must(`SELECT current_setting('default_transaction_read_only')`, "on")
		refused(`SELECT count(*) FROM public.entities`, "does not exist")
		refused(`SELECT count(*) FROM public.entity_revisions`, "does not exist")
		refused(`SELECT count(*) FROM public.sql_schemas`, "does not exist")
		refused(`SELECT orderid FROM `+lb(t, env)+`.orders`, "does not exist")
		refused(`CREATE TABLE t (a int)`, "read-only transaction")
		must(`SELECT count(*) FROM orders WHERE orderid = 'SECRET'`, "0")
		// One session setting moves every view to the past.
		must(`SET svc.point_time = '2000-01-01T00:00:00Z'; SELECT count(*) FROM orders o JOIN orders_lines l USING (entity_id)`, "SET\n0")
		// Rotation: the old password stops working, HTTP keeps working.
		var rotated storage.SQLLogin
		env.call("A:admin", "POST", "/sql/credentials/rotate?schemaName=shop", nil).ok(t).decode(t, &rotated)
		if rotated.Password == l.Password || rotated.Role != l.Role {
			t.Fatalf("rotate %+v", rotated)
		}
		wantRows(t, "after rotation", env.query("A", "shop", `SELECT count(*) AS n FROM orders`), `{"n":3}`)
		l = rotated
		must(`SELECT count(*) FROM orders`, "3")
	})
}

func lb(t *testing.T, env *sqlEnv) string {
	var l storage.SQLLogin
	env.call("B:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &l)
	return l.Schema
}

type sqlschemaConfigForTest struct {
	Tables []struct {
		Hidden bool `json:"hidden"`
	} `json:"tables"`
}
