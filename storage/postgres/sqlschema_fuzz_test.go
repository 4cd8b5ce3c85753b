package postgres

import (
	"strings"
	"testing"

	"svc/storage"
)

// FuzzViewSQL feeds arbitrary paths, keys and literals to the view
// generator: it errors or writes a statement, never panics, and every
// user-supplied text reaches the SQL only inside a quoted literal or
// identifier (no unbalanced quote survives).
func FuzzViewSQL(f *testing.F) {
	f.Add("$.lines[*].discounts[*]", ".code", "STRING", "ten'ant", "m")
	f.Add("$.grid[*]^", "[1]", "INTEGER", "t", "m\"x")
	f.Add("json", "JSON", "OBJECT", "t", "m")
	f.Add("$.a[*][*]^", "[*]", "ZONED_DATE_TIME", "t", "m")
	f.Add("$", ".a.b[3]", "BIG_DECIMAL", "t", "m")
	f.Fuzz(func(t *testing.T, path, key, dataType, tenant, model string) {
		if strings.ContainsRune(tenant+model+key+path, 0) {
			return // PostgreSQL text cannot hold NUL; the API never stores one
		}
		v := storage.SQLView{Name: "v", Model: storage.ModelKey{Name: model, Version: 1}, Path: path,
			Columns: []storage.SQLColumn{
				{Name: "entity_id", Category: "SPECIAL", Key: "ENTITY_ID"},
				{Name: "index_0", Category: "INDEX", Key: "0"},
				{Name: "d", Category: "DATA", Key: key, DataType: dataType},
			}}
		for _, revs := range []bool{false, true} {
			q, err := remoteViewSQL("s", "t1_now", tenant, v, revs)
			if err != nil {
				return
			}
			if strings.Count(q, "'")%2 != 0 {
				t.Fatalf("unbalanced quotes in %s", q)
			}
			if !strings.Contains(q, literal(tenant)) || !strings.Contains(q, literal(model)) {
				t.Fatalf("tenant and model must appear as literals: %s", q)
			}
		}
	})
}
