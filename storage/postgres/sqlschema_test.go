package postgres

import (
	"context"
	"testing"
)

// TestSQLExtractionFunctions: every typed extraction gives the value when
// the JSON has the column's shape and NULL otherwise, never an error, so
// one odd document cannot break a query over a view.
func TestSQLExtractionFunctions(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	cases := []struct{ expr, want string }{
		{`svc_sql.txt('"a"')`, "a"}, {`svc_sql.txt('12.5')`, "12.5"}, {`svc_sql.txt('true')`, "true"}, {`svc_sql.txt('null')`, "<null>"},
		{`svc_sql.int4('7')`, "7"}, {`svc_sql.int4('"7"')`, "<null>"}, {`svc_sql.int4('7.5')`, "<null>"}, {`svc_sql.int4('99999999999')`, "<null>"},
		{`svc_sql.int8('99999999999')`, "99999999999"}, {`svc_sql.int8('1e400')`, "<null>"},
		{`svc_sql.num('1e400') > 0`, "true"}, {`svc_sql.num('"x"')`, "<null>"},
		{`svc_sql.dec38('12.25')`, "12.250000000000000000"}, {`svc_sql.dec38('1e25')`, "<null>"},
		{`svc_sql.f8('1.5')`, "1.5"}, {`svc_sql.f8('1e400')`, "<null>"}, {`svc_sql.f8('1e-400')`, "<null>"}, {`svc_sql.f8('0')`, "0"},
		{`svc_sql.bool('true')`, "true"}, {`svc_sql.bool('"true"')`, "<null>"},
		{`svc_sql.uuid('"6ba7b810-9dad-11d1-80b4-00c04fd430c8"')`, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}, {`svc_sql.uuid('"nope"')`, "<null>"},
		{`svc_sql.date('"2026-02-28"')`, "2026-02-28"}, {`svc_sql.date('"2026-02-30"')`, "<null>"}, {`svc_sql.date('"2026-05"')`, "2026-05-01"}, {`svc_sql.date('5')`, "<null>"},
		{`svc_sql.ts('"2026-01-02T03:04:05.5"')`, "2026-01-02 03:04:05.5"}, {`svc_sql.ts('"2026-13-02T03:04:05"')`, "<null>"},
		{`svc_sql.tstz('"2026-01-02T03:04:05Z"') = '2026-01-02T03:04:05Z'::timestamptz`, "true"},
		{`svc_sql.tstz('"2026-01-02T03:04:05+02:00[Europe/Paris]"') = '2026-01-02T01:04:05Z'::timestamptz`, "true"},
		{`svc_sql.tstz('"2026-01-02T03:04:05"')`, "<null>"},
		{`svc_sql.time('"10:11:12"')`, "10:11:12"}, {`svc_sql.time('"25:00:00"')`, "<null>"},
		{`svc_sql.year('2024')`, "2024"}, {`svc_sql.year('"2024"')`, "2024"}, {`svc_sql.year('"x"')`, "<null>"},
		{`encode(svc_sql.bytes('"aGk="'), 'escape')`, "hi"}, {`svc_sql.bytes('"!!"')`, "<null>"},
		{`jsonb_array_length(svc_sql.arr('{"a":1}'))`, "0"},
		{`svc_sql.point_time()`, "<null>"},
	}
	c, err := db.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for _, tc := range cases {
		var got *string
		if err := c.QueryRow(ctx, "SELECT ("+tc.expr+")::text").Scan(&got); err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		s := "<null>"
		if got != nil {
			s = *got
		}
		if s != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, s, tc.want)
		}
	}
}
