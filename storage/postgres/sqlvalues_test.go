package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"svc/storage"
)

// Array text that is not what PostgreSQL writes (a statement can change
// the output settings itself) passes through as text, never a panic.
func TestSQLArrayTextMalformed(t *testing.T) {
	col := sqlColumnOf(pgtype.Int4ArrayOID)
	for _, s := range []string{"", "{", "{1", "{1,", `{"a`, `{"a\`, "[1:2", "[1:2]=", "{1}}", "{{1},2", "x{1}", "{1,2}x"} {
		v := col.value([]byte(s))
		if v.Kind != storage.SQLText || v.Text != s {
			t.Errorf("%q read as %+v, want it as text", s, v)
		}
	}
	v := col.value([]byte("{{1,NULL},{3,4}}"))
	if v.Kind != storage.SQLArray || len(v.Elems) != 2 || v.Elems[0].Elems[1].Kind != storage.SQLNull || v.Elems[1].Elems[1].Text != "4" {
		t.Fatalf("2-D array read as %+v", v)
	}
}
