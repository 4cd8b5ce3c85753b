package fast

import (
	"encoding/csv"
	"strings"
	"testing"
)

// TestSQLQueryTypes renders every kind of PostgreSQL value a query can
// return, through POST /sql/query on a real PostgreSQL, as NDJSON and as
// CSV. Before the fix infinity timestamps and dates read as 1/-1,
// multi-dimensional arrays came flattened, intervals as driver structs,
// ranges as {"Lower":…} objects, and bytea as base64 in NDJSON but hex in
// CSV.
func TestSQLQueryTypes(t *testing.T) {
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	for _, c := range []struct {
		name, expr string
		json       string // the NDJSON value
		csv        string // the CSV field before CSV quoting
	}{
		{"timestamptz infinity", `'infinity'::timestamptz`, `"infinity"`, `infinity`},
		{"timestamptz -infinity", `'-infinity'::timestamptz`, `"-infinity"`, `-infinity`},
		{"timestamptz", `'2026-01-02T03:04:05.123456+02:00'::timestamptz`, `"2026-01-02T01:04:05.123456Z"`, `2026-01-02T01:04:05.123456Z`},
		{"timestamp infinity", `'infinity'::timestamp`, `"infinity"`, `infinity`},
		{"timestamp", `'2026-01-02 03:04:05.5'::timestamp`, `"2026-01-02T03:04:05.5"`, `2026-01-02T03:04:05.5`},
		{"date infinity", `'infinity'::date`, `"infinity"`, `infinity`},
		{"date -infinity", `'-infinity'::date`, `"-infinity"`, `-infinity`},
		{"date", `'2026-02-03'::date`, `"2026-02-03"`, `2026-02-03`},
		{"time", `'13:14:15.25'::time`, `"13:14:15.25"`, `13:14:15.25`},
		{"interval", `'1 day 02:03:04'::interval`, `"P1DT2H3M4S"`, `P1DT2H3M4S`},
		{"interval months", `'1 year 2 months -3 days 0.5 seconds'::interval`, `"P1Y2M-3DT0.5S"`, `P1Y2M-3DT0.5S`},
		{"2-D array", `ARRAY[[1,2],[3,4]]`, `[[1,2],[3,4]]`, `[[1,2],[3,4]]`},
		{"3-D array", `ARRAY[[[1,2],[3,4]],[[5,6],[7,8]]]`, `[[[1,2],[3,4]],[[5,6],[7,8]]]`, `[[[1,2],[3,4]],[[5,6],[7,8]]]`},
		{"text array quoting", `ARRAY['a,b', 'say "hi"', NULL, 'NULL', '', 'back\slash']`,
			`["a,b","say \"hi\"",null,"NULL","","back\\slash"]`, `["a,b","say \"hi\"",null,"NULL","","back\\slash"]`},
		{"empty array", `'{}'::int[]`, `[]`, `[]`},
		{"array with bounds", `'[0:1]={7,8}'::int[]`, `[7,8]`, `[7,8]`},
		{"timestamptz array", `ARRAY['infinity'::timestamptz, '2026-01-02T03:04:05Z']`, `["infinity","2026-01-02T03:04:05Z"]`, `["infinity","2026-01-02T03:04:05Z"]`},
		{"numeric array", `ARRAY[1.50, 'NaN']::numeric[]`, `[1.50,"NaN"]`, `[1.50,"NaN"]`},
		{"tsvector", `'a b'::tsvector`, `"'a' 'b'"`, `'a' 'b'`},
		{"int4range", `int4range(1,5)`, `"[1,5)"`, `[1,5)`},
		{"tstzrange", `tstzrange('2026-01-01T00:00:00Z', NULL)`, `"[\"2026-01-01 00:00:00+00\",)"`, `["2026-01-01 00:00:00+00",)`},
		{"empty range", `'empty'::int4range`, `"empty"`, `empty`},
		{"multirange", `int4multirange(int4range(1,3), int4range(5,7))`, `"{[1,3),[5,7)}"`, `{[1,3),[5,7)}`},
		{"range array", `ARRAY[int4range(1,3), int4range(5,7)]`, `["[1,3)","[5,7)"]`, `["[1,3)","[5,7)"]`},
		{"numeric NaN", `'NaN'::numeric`, `"NaN"`, `NaN`},
		{"numeric Infinity", `'Infinity'::numeric`, `"Infinity"`, `Infinity`},
		{"numeric exact", `12345678901234567890.000000000001::numeric`, `12345678901234567890.000000000001`, `12345678901234567890.000000000001`},
		{"float NaN", `'NaN'::float8`, `"NaN"`, `NaN`},
		{"float -Infinity", `'-Infinity'::float8`, `"-Infinity"`, `-Infinity`},
		{"float", `1.5::float8`, `1.5`, `1.5`},
		{"float exponent", `1e300::float8`, `1e+300`, `1e+300`},
		{"bytea", `'\x0102'::bytea`, `"\\x0102"`, `\x0102`},
		{"bytea array", `ARRAY['\x0102'::bytea]`, `["\\x0102"]`, `["\\x0102"]`},
		{"bool", `true`, `true`, `true`},
		{"bool array", `ARRAY[true,false]`, `[true,false]`, `[true,false]`},
		{"int8", `9223372036854775807::int8`, `9223372036854775807`, `9223372036854775807`},
		{"text", `'x<y>&z' || chr(10) || 'n'`, `"x\u003cy\u003e\u0026z\nn"`, "x<y>&z\nn"},
		{"uuid", `'0193c0de-0000-7000-8000-000000000001'::uuid`, `"0193c0de-0000-7000-8000-000000000001"`, `0193c0de-0000-7000-8000-000000000001`},
		{"jsonb", `'{"b": [1, 2.50], "a": 12345678901234567890}'::jsonb`, `{"a":12345678901234567890,"b":[1,2.50]}`, `{"a":12345678901234567890,"b":[1,2.50]}`},
		{"json keeps order, one line", "'{\"z\": 1,\n \"a\": 2}'::json", `{"z":1,"a":2}`, `{"z":1,"a":2}`},
		{"null", `NULL::int`, `null`, ``},
		{"inet", `'10.1.2.3/8'::inet`, `"10.1.2.3/8"`, `10.1.2.3/8`},
		{"point", `point(1,2)`, `"(1,2)"`, `(1,2)`},
		{"box array delimiter", `ARRAY[box '((1,1),(0,0))', box '((2,2),(1,1))']`, `["(1,1),(0,0)","(2,2),(1,1)"]`, `["(1,1),(0,0)","(2,2),(1,1)"]`},
		{"record", `ROW(1, 'a b')`, `"(1,\"a b\")"`, `(1,"a b")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sql := "SELECT " + c.expr + " AS v"
			got := env.with(t).query("A", "shop", sql)
			if len(got) != 1 || got[0] != `{"v":`+c.json+`}` {
				t.Fatalf("NDJSON of %s:\n got %q\nwant %q", c.expr, got, `{"v":`+c.json+`}`)
			}
			r := env.with(t).queryCSV("A", "shop", sql)
			var want strings.Builder
			cw := csv.NewWriter(&want)
			_ = cw.WriteAll([][]string{{"v"}, {c.csv}})
			if r != want.String() {
				t.Fatalf("CSV of %s:\n got %q\nwant %q", c.expr, r, want.String())
			}
		})
	}
}

func (e *sqlEnv) with(t testing.TB) *sqlEnv {
	c := *e
	c.entityEnv = e.entityEnv.with(t)
	return &c
}

// queryCSV runs POST /sql/query with Accept: text/csv.
func (e *sqlEnv) queryCSV(tenant, schema, sql string) string {
	e.t.Helper()
	b := []byte(`{"schemaName":` + string(appendJSONString(nil, schema)) + `,"sql":` + string(appendJSONString(nil, sql)) + `}`)
	r := e.call(tenant, "POST", "/sql/query", b, "Accept", "text/csv").ok(e.t)
	if !strings.HasPrefix(r.ctype, "text/csv") {
		e.t.Fatalf("content type %q", r.ctype)
	}
	return string(r.body)
}
