package predicate

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"svc/storage/pgtest"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "predicate", &testDBURL) }

var testCols = SQLColumns{Doc: "doc", ID: "id::text", State: "state", Transition: "transition",
	TransactionID: "tx", Created: "created_at", LastUpdated: "updated_at"}

func openDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	if testDBURL == "" {
		t.Skip("no PostgreSQL")
	}
	pool, err := pgxpool.New(context.Background(), testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// diffSchema types the generated documents' fields.
var diffSchema = NewFieldMap(map[string]TypeSet{
	"$.price":              Types(TypeInteger, TypeLong, TypeBigInteger),
	"$.amount":             Types(TypeDouble, TypeBigDecimal),
	"$.name":               Types(TypeString),
	"$.poly":               Types(TypeInteger, TypeString),
	"$.flag":               Types(TypeBoolean),
	"$.day":                Types(TypeLocalDate, TypeString),
	"$.uid":                Types(TypeUUID),
	"$.tags[*]":            Types(TypeString, TypeNull),
	"$.grid[*][*]":         Types(TypeInteger),
	"$.laureates[*].first": Types(TypeString),
	"$.laureates[*].age":   Types(TypeInteger),
	"$.nested.k":           Types(TypeInteger),
	"$.nested.s":           Types(TypeString),
	"$.mixed.0":            Types(TypeInteger),
	"$.mixed[*]":           Types(TypeInteger),
	"$.k1.2x":              Types(TypeString),
})

var (
	namePool  = []string{"alpha", "Beta", "beta", "delta", "gamma%", "a_b", "ÄBC", "äbc", "", `x\y`, "tab\tq", "Straße", "é", "K"}
	pricePool = []string{"-3", "0", "1", "12", "12.0", "13", "100", "1e2", "12345678901234567890", "-0.5", "2147483648"}
	amtPool   = []string{"1.5", "2.25", "-0.5", "0", "1e-3", "0.001", "3.14159265358979323846", "7"}
	dayPool   = []string{"2024-09-08", "2024-09-09", "2024-09-10", "2023-01-01", "n/a", "2024-02-29"}
	statePool = []string{"NEW", "APPROVED", "approved", "Done", ""}
	uuidPool  = []string{"7e7d0000-0000-0000-0000-000000000001", "8e7d0000-0000-0000-0000-000000000002"}
)

func pick[T any](r *mrand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type genEnt struct {
	id   string
	doc  string
	meta Meta
}

func genDoc(r *mrand.Rand) string {
	var fs []string
	add := func(k, v string) {
		if r.IntN(8) != 0 {
			fs = append(fs, jstr(k)+":"+v)
		}
	}
	maybeNull := func(v string) string {
		if r.IntN(10) == 0 {
			return "null"
		}
		return v
	}
	add("price", maybeNull(pick(r, pricePool)))
	add("amount", maybeNull(pick(r, amtPool)))
	add("name", maybeNull(jstr(pick(r, namePool))))
	if r.IntN(2) == 0 {
		add("poly", pick(r, []string{"30", "31", "-1"}))
	} else {
		add("poly", jstr(pick(r, []string{"30", "s-1", "x"})))
	}
	add("flag", pick(r, []string{"true", "false", `"true"`}))
	add("day", jstr(pick(r, dayPool)))
	add("uid", jstr(pick(r, uuidPool)))
	var tags []string
	for range r.IntN(4) {
		if r.IntN(6) == 0 {
			tags = append(tags, "null")
		} else {
			tags = append(tags, jstr(pick(r, namePool)))
		}
	}
	add("tags", "["+strings.Join(tags, ",")+"]")
	var rows []string
	for range r.IntN(3) {
		var cells []string
		for range r.IntN(3) {
			cells = append(cells, pick(r, pricePool))
		}
		rows = append(rows, "["+strings.Join(cells, ",")+"]")
	}
	add("grid", "["+strings.Join(rows, ",")+"]")
	var ls []string
	for range r.IntN(3) {
		ls = append(ls, `{"first":`+jstr(pick(r, namePool))+`,"age":`+pick(r, pricePool)+`}`)
	}
	add("laureates", "["+strings.Join(ls, ",")+"]")
	switch r.IntN(4) {
	case 0:
		add("nested", "null")
	case 1:
		add("nested", "[1,2]")
	default:
		add("nested", `{"k":`+pick(r, pricePool)+`,"s":`+jstr(pick(r, namePool))+`}`)
	}
	if r.IntN(2) == 0 {
		add("mixed", `[`+pick(r, pricePool)+`,5]`)
	} else {
		add("mixed", `{"0":`+pick(r, pricePool)+`}`)
	}
	add("k1", `{"2x":`+jstr(pick(r, namePool))+`}`)
	return "{" + strings.Join(fs, ",") + "}"
}

var diffPaths = []struct {
	path string
	pool []string // JSON operands
}{
	{"$.price", pricePool},
	{"$.amount", amtPool},
	{"$.name", quoteAll(namePool)},
	{"$.poly", []string{"30", `"30"`, `"s-1"`, "31", `"x"`}},
	{"$.flag", []string{"true", "false", `"true"`}},
	{"$.day", quoteAll(dayPool)},
	{"$.uid", quoteAll(uuidPool)},
	{"$.tags[*]", quoteAll(namePool)},
	{"$.tags[0]", quoteAll(namePool)},
	{"$.grid[*][*]", pricePool},
	{"$.laureates[*].first", quoteAll(namePool)},
	{"$.laureates[*].age", pricePool},
	{"$.nested.k", pricePool},
	{"$.nested.s", quoteAll(namePool)},
	{"$.mixed.0", pricePool},
	{"$.mixed[*]", pricePool},
	{"$.k1.2x", quoteAll(namePool)},
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = jstr(x)
	}
	return out
}

var likeOperands = []string{`"%a"`, `"_eta"`, `"a\\_b"`, `"gamma\\%"`, `"%"`, `"%ä%"`, `"Stra_e"`, `"x\\\\y"`}

func genLeaf(r *mrand.Rand, times []time.Time) string {
	if r.IntN(5) == 0 {
		field := pick(r, []string{"state", "id", "transitionForLatestSave", "transactionId", "creationDate", "lastUpdateTime"})
		op := Op(1 + r.IntN(int(numOps)-1))
		var v string
		switch field {
		case "creationDate", "lastUpdateTime":
			ts := pick(r, times)
			v = jstr(pick(r, []string{ts.Format("2006-01-02T15:04:05.000Z07:00"), ts.Format("2006-01-02"), "2024",
				ts.Add(time.Millisecond).Format(time.RFC3339Nano), ts.Format("2006-01-02T15:04")}))
		case "id":
			v = jstr(pick(r, []string{"7e", "0000", "-"}))
		default:
			v = jstr(pick(r, statePool))
		}
		if op.family() == famRange {
			v = "[" + v + "," + v + "]"
			if field == "creationDate" || field == "lastUpdateTime" {
				v = "[" + jstr(pick(r, times).Format(time.RFC3339Nano)) + "," + jstr(pick(r, times).Format(time.RFC3339Nano)) + "]"
			}
		}
		if op == OpLike {
			v = pick(r, []string{`"N%"`, `"%e%"`, `"_ONE"`})
		}
		return fmt.Sprintf(`{"type":"lifecycle","field":%q,"operatorType":%q,"value":%s}`, field, op, v)
	}
	if r.IntN(12) == 0 {
		vals := []string{}
		for range 1 + r.IntN(2) {
			if r.IntN(3) == 0 {
				vals = append(vals, "null")
			} else {
				vals = append(vals, jstr(pick(r, namePool)))
			}
		}
		return `{"type":"array","jsonPath":"$.tags","values":[` + strings.Join(vals, ",") + `]}`
	}
	p := pick(r, diffPaths)
	if r.IntN(10) == 0 {
		// The client-template set operators expand into groups of EQUALS.
		var vals []string
		for range r.IntN(4) {
			vals = append(vals, pick(r, p.pool))
		}
		return fmt.Sprintf(`{"type":"simple","jsonPath":%q,"operatorType":%q,"value":[%s]}`, p.path,
			pick(r, []string{"IN", "NOT_IN"}), strings.Join(vals, ","))
	}
	op := Op(1 + r.IntN(int(numOps)-1))
	v := pick(r, p.pool)
	switch {
	case op.family() == famRange:
		v = "[" + pick(r, p.pool) + "," + pick(r, p.pool) + "]"
	case op == OpLike:
		v = pick(r, likeOperands)
	case op.family() == famPresence:
		v = "null"
	case r.IntN(15) == 0:
		v = "null"
	}
	return fmt.Sprintf(`{"type":"simple","jsonPath":%q,"operatorType":%q,"value":%s}`, p.path, op, v)
}

func genCond(r *mrand.Rand, depth int, times []time.Time) string {
	if depth >= 3 || r.IntN(3) != 0 {
		return genLeaf(r, times)
	}
	op := pick(r, []string{"AND", "OR", "NOT"})
	n := 1
	if op != "NOT" {
		n = r.IntN(4)
	}
	var cs []string
	for range n {
		cs = append(cs, genCond(r, depth+1, times))
	}
	return group(op, cs...)
}

// TestSQLMatchesGo is the differential test: generated conditions over
// generated documents select the same entities in Go and in PostgreSQL,
// or, where SQL reports itself inexact, a superset.
func TestSQLMatchesGo(t *testing.T) {
	pool := openDB(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PREDICATE_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (PREDICATE_SEED reproduces)", seed)
	r := mrand.New(mrand.NewPCG(seed, 7))

	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS diff_ents (id uuid PRIMARY KEY, doc jsonb NOT NULL,
		state text NOT NULL, transition text NOT NULL, tx text NOT NULL, created_at timestamptz, updated_at timestamptz);
		TRUNCATE diff_ents;
		CREATE INDEX IF NOT EXISTS diff_ents_doc ON diff_ents USING gin (doc jsonb_path_ops)`)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	var times []time.Time
	for range 12 {
		times = append(times, base.Add(time.Duration(r.Int64N(int64(72*time.Hour)))).Truncate(time.Microsecond))
	}
	var ents []genEnt
	for i := range 250 {
		e := genEnt{id: fmt.Sprintf("%08x-0000-4000-8000-%012x", r.Uint32(), i), doc: genDoc(r)}
		e.meta = Meta{ID: e.id, State: pick(r, statePool), TransitionForLatestSave: pick(r, statePool),
			TransactionID: pick(r, statePool), CreationDate: pick(r, times)}
		if r.IntN(4) != 0 {
			e.meta.LastUpdateTime = pick(r, times).Add(time.Duration(r.IntN(3)) * time.Microsecond)
		}
		var upd any
		if !e.meta.LastUpdateTime.IsZero() {
			upd = e.meta.LastUpdateTime
		}
		if _, err := pool.Exec(ctx, `INSERT INTO diff_ents VALUES ($1,$2::jsonb,$3,$4,$5,$6,$7)`, e.id, e.doc,
			e.meta.State, e.meta.TransitionForLatestSave, e.meta.TransactionID, e.meta.CreationDate, upd); err != nil {
			t.Fatalf("insert %s: %v", e.doc, err)
		}
		ents = append(ents, e)
	}
	slices.SortFunc(ents, func(a, b genEnt) int { return strings.Compare(a.id, b.id) })

	conds, exactN, nonEmpty := 0, 0, 0
	for i := 0; conds < 1500 && i < 20000; i++ {
		src := genCond(r, 0, times)
		schema := Schema(diffSchema)
		if i%4 == 3 {
			schema = nil
		}
		c, err := Compile([]byte(src), schema)
		if err != nil {
			continue // type mismatches are expected from random operands
		}
		conds++
		var want []string
		for _, e := range ents {
			if c.Match([]byte(e.doc), &e.meta) {
				want = append(want, e.id)
			}
		}
		b := &SQLBuilder{Cols: testCols}
		frag, exact, err := c.SQL(b)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		rows, err := pool.Query(ctx, "SELECT id::text FROM diff_ents WHERE "+frag+" ORDER BY id::text", b.Args...)
		if err != nil {
			t.Fatalf("%s\nSQL %s\nargs %v\n%v", src, frag, b.Args, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s\nSQL %s\nargs %v\n%v", src, frag, b.Args, err)
		}
		if exact {
			exactN++
			if !slices.Equal(got, want) {
				t.Fatalf("exact SQL differs from Go\ncond %s\nSQL %s\nargs %q\nGo  %d %v\nSQL %d %v\nonly Go %v\nonly SQL %v",
					src, frag, b.Args, len(want), want, len(got), got, minus(want, got, ents), minus(got, want, ents))
			}
		} else if d := minus(want, got, ents); len(d) > 0 {
			t.Fatalf("inexact SQL is not a superset\ncond %s\nSQL %s\nargs %q\nmissing %v", src, frag, b.Args, d)
		}
		if len(want) > 0 && len(want) < len(ents) {
			nonEmpty++
		}
	}
	t.Logf("%d conditions, %d exact, %d selective", conds, exactN, nonEmpty)
	if conds < 1000 || exactN < conds/2 || nonEmpty < conds/5 {
		t.Fatalf("generator coverage too thin: %d conditions, %d exact, %d selective", conds, exactN, nonEmpty)
	}
}

// minus lists the ids in a but not in b, with their documents.
func minus(a, b []string, ents []genEnt) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			for _, e := range ents {
				if e.id == x {
					out = append(out, x+" "+e.doc+fmt.Sprintf(" %+v", e.meta))
				}
			}
		}
	}
	return out
}

// TestSQLUsesGINIndex checks that EQUALS on a data path is answered from a
// GIN jsonb_path_ops index.
func TestSQLUsesGINIndex(t *testing.T) {
	pool := openDB(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS gin_ents (id uuid PRIMARY KEY, doc jsonb NOT NULL);
		CREATE INDEX IF NOT EXISTS gin_ents_doc ON gin_ents USING gin (doc jsonb_path_ops)`)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, group("AND", simple("$.price", "EQUALS", 12), simple("$.tags[*]", "EQUALS", "x")), diffSchema)
	b := &SQLBuilder{Cols: SQLColumns{Doc: "doc"}}
	frag, exact, err := c.SQL(b)
	if err != nil || !exact {
		t.Fatalf("%v %v", exact, err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "EXPLAIN SELECT id FROM gin_ents WHERE "+frag, b.Args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "gin_ents_doc") {
		t.Fatalf("plan does not use the GIN index:\n%s", strings.Join(plan, "\n"))
	}
}

// TestSQLNeverConcatenatesValues: operands only ever reach the statement as
// parameters.
func TestSQLNeverConcatenatesValues(t *testing.T) {
	evil := `x'; DROP TABLE diff_ents; --`
	c := mustCompile(t, group("OR", simple("$.name", "EQUALS", evil), simple("$.name", "CONTAINS", evil),
		simple("$.name", "LIKE", evil), `{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"`+strings.ReplaceAll(evil, `'`, `'`)+`"}`), nil)
	b := &SQLBuilder{Cols: testCols}
	frag, _, err := c.SQL(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(frag, "DROP") || strings.Contains(frag, "x'") {
		t.Fatalf("operand text in SQL: %s", frag)
	}
}

// TestSQLOddOperands: operands PostgreSQL cannot take as text, numbers and
// instants beyond its ranges, and odd keys all render SQL that runs and
// selects a superset of what Go selects.
func TestSQLOddOperands(t *testing.T) {
	pool := openDB(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS odd_ents (id uuid PRIMARY KEY, doc jsonb NOT NULL,
		state text NOT NULL, transition text NOT NULL, tx text NOT NULL, created_at timestamptz, updated_at timestamptz);
		TRUNCATE odd_ents;
		INSERT INTO odd_ents VALUES ('00000000-0000-4000-8000-000000000001', '{"a":1,"s":"x","n":{"0":2}}', 'NEW', '', '', now(), NULL),
		('00000000-0000-4000-8000-000000000002', '{"a":1e300,"s":"","n":[2]}', '', '', '', now(), now())`)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"00000000-0000-4000-8000-000000000001": `{"a":1,"s":"x","n":{"0":2}}`,
		"00000000-0000-4000-8000-000000000002": `{"a":1e300,"s":"","n":[2]}`}
	lc := `{"type":"lifecycle","field":"%s","operatorType":"%s","value":%s}`
	conds := []string{
		simple("$.s", "EQUALS", "a\u0000b"), simple("$.s", "NOT_CONTAINS", "\u0000"), simple("$.s", "LIKE", "%\u0000"),
		group("NOT", simple("$.s", "EQUALS", "\u0000")), simple("$.s\u0000", "IS_NULL", nil),
		simple("$.a", "LESS_THAN", raw("1e999999")), simple("$.a", "GREATER_THAN", raw("-1e-999999")),
		simple("$.a", "EQUALS", raw("1e300")), simple("$.a", "BETWEEN", raw("[0, 1e400000]")),
		fmt.Sprintf(lc, "creationDate", "LESS_THAN", `"999999"`), fmt.Sprintf(lc, "creationDate", "GREATER_THAN", `"0000"`),
		fmt.Sprintf(lc, "lastUpdateTime", "NOT_EQUAL", `"2024"`), fmt.Sprintf(lc, "state", "EQUALS", `"\u0000"`),
		simple("$.n.0", "EQUALS", 2), simple("$.n[0]", "EQUALS", 2), simple("$.s", "EQUALS", ""),
	}
	for _, src := range conds {
		c, err := Compile([]byte(src), nil)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		b := &SQLBuilder{Cols: testCols}
		frag, exact, err := c.SQL(b)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pool.Query(ctx, "SELECT id::text, doc::text, state, created_at, updated_at FROM odd_ents WHERE "+frag, b.Args...)
		if err != nil {
			t.Fatalf("%s\n%s\n%v", src, frag, err)
		}
		got := map[string]bool{}
		for rows.Next() {
			var id, doc, state string
			var cr time.Time
			var up *time.Time
			if err := rows.Scan(&id, &doc, &state, &cr, &up); err != nil {
				t.Fatal(err)
			}
			got[id] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s\n%s\n%v", src, frag, err)
		}
		for id, doc := range docs {
			m := &Meta{ID: id, CreationDate: time.Now()}
			if id == "00000000-0000-4000-8000-000000000001" {
				m.State = "NEW"
			} else {
				m.LastUpdateTime = time.Now()
			}
			if c.Match([]byte(doc), m) && !got[id] {
				t.Errorf("%s: SQL (exact=%v) misses %s", src, exact, id)
			}
		}
	}
}
