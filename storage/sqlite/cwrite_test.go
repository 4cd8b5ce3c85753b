package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"
)

// The writer executes through SQLite's C interface (cwrite.go): the
// driver's connection value still has the field rawDB reads. Values bind as
// the driver binds them (NULL for a nil []byte and nil, a zero-length blob
// for an empty one, bool as 0 or 1, a named string type as text); what the
// C path does not take (two statements in one string, a time.Time the
// driver formats, a named parameter) runs through the driver; a busy error
// keeps its code.
func TestWriterCPath(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	if db.w.c == nil {
		t.Fatal("the writer runs through the driver: rawDB found no sqlite3* in the driver's connection (did modernc.org/sqlite's conn type change?)")
	}
	ctx := context.Background()
	type name string
	err := db.w.write(ctx, func(w *wtx) error {
		if _, err := w.exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, b BLOB, s ANY, f ANY) STRICT`); err != nil {
			return err
		}
		rows := [][]any{
			{1, []byte(nil), nil, true},
			{int64(2), []byte{}, name("x"), 2.5},
			{int32(3), []byte("ab"), "ü", false},
		}
		for _, r := range rows {
			res, err := w.exec(`INSERT INTO t (k, b, s, f) VALUES (?, ?, ?, ?)`, r...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("RowsAffected %d", n)
			}
		}
		if _, err := w.exec(`INSERT INTO t (k, s) VALUES (?2, ?1)`, "numbered", 4); err != nil {
			return err
		}
		// Through the driver: a time (formatted by it), two statements, a
		// named parameter.
		if _, err := w.exec(`INSERT INTO t (k, s) VALUES (?, ?)`, 5, time.Unix(0, 0).UTC()); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO t (k) VALUES (6); INSERT INTO t (k) VALUES (7)`); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO t (k, s) VALUES (:k, 'named')`, sql.Named("k", 8)); err != nil {
			return err
		}
		res, err := w.exec(`DELETE FROM t WHERE k > ?`, 6)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 2 {
			t.Errorf("DELETE RowsAffected %d, want 2", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{1: "null|null|integer:1", 2: "blob:0|text:x|real:2.5", 3: "blob:2|text:ü|integer:0",
		4: "null|text:numbered|null", 6: "null|null|null"}
	rows, err := db.r.QueryContext(ctx, `SELECT k, coalesce(typeof(b) || ':' || length(b), 'null'),
		coalesce(typeof(s) || ':' || s, 'null'), coalesce(typeof(f) || ':' || f, 'null') FROM t ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int64]string{}
	for rows.Next() {
		var k int64
		var b, s, f string
		if err := rows.Scan(&k, &b, &s, &f); err != nil {
			t.Fatal(err)
		}
		got[k] = b + "|" + s + "|" + f
	}
	if !strings.HasPrefix(got[5], "null|text:1970-01-01") {
		t.Errorf("row 5: %q, want the driver's text of a time", got[5])
	}
	delete(got, 5)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("row %d: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	// A constraint error comes back with its code, and the job's failure
	// rolls its work back.
	err = db.w.write(ctx, func(w *wtx) error {
		_, err := w.exec(`INSERT INTO t (k) VALUES (?)`, 1)
		return err
	})
	var ce interface{ Code() int }
	if !errors.As(err, &ce) || ce.Code()&0xff != 19 {
		t.Fatalf("duplicate key: %v, want SQLITE_CONSTRAINT", err)
	}
}
