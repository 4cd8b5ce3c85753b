package predicate

import (
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"svc/platform/apierr"
)

// testSchema is a model with plain, polymorphic, temporal, array and nested
// fields.
var testSchema = NewFieldMap(map[string]TypeSet{
	"$.price":              Types(TypeInteger),
	"$.amount":             Types(TypeDouble),
	"$.name":               Types(TypeString),
	"$.poly":               Types(TypeInteger, TypeString),
	"$.flag":               Types(TypeBoolean),
	"$.day":                Types(TypeLocalDate),
	"$.year":               Types(TypeYear),
	"$.at":                 Types(TypeZonedDateTime),
	"$.uid":                Types(TypeUUID),
	"$.ch":                 Types(TypeCharacter),
	"$.tags[*]":            Types(TypeString),
	"$.nums[*]":            Types(TypeInteger),
	"$.laureates[*].first": Types(TypeString),
	"$.nested.k":           Types(TypeInteger),
	"$.nested.s":           Types(TypeString),
	"$.onlynull":           Types(TypeNull),
})

func simple(path, op string, value any) string {
	return fmt.Sprintf(`{"type":"simple","jsonPath":%s,"operatorType":%q,"value":%s}`, jsonOf(path), op, jsonOf(value))
}

func jsonOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		b, _ := stdjson.Marshal(x)
		return string(b)
	case raw:
		return string(x)
	default:
		return fmt.Sprint(x)
	}
}

// raw is JSON text used as is.
type raw string

func group(op string, conds ...string) string {
	return `{"type":"group","operator":"` + op + `","conditions":[` + strings.Join(conds, ",") + `]}`
}

func mustCompile(t *testing.T, cond string, s Schema) *Condition {
	t.Helper()
	c, err := Compile([]byte(cond), s)
	if err != nil {
		t.Fatalf("compile %s: %v", cond, err)
	}
	return c
}

func errCode(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code.String()
	}
	if err != nil {
		return "non-api:" + err.Error()
	}
	return ""
}

func TestParseErrors(t *testing.T) {
	deep := `{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":1}`
	for i := 0; i < 51; i++ {
		deep = group("AND", deep)
	}
	deep50 := `{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":1}`
	for i := 0; i < 50; i++ {
		deep50 = group("AND", deep50)
	}
	cases := []struct {
		name, cond, code string
	}{
		{"invalid json", `{"type":`, "BAD_REQUEST"},
		{"empty object", `{}`, "BAD_REQUEST"},
		{"unknown type", `{"type":"weird"}`, "BAD_REQUEST"},
		{"json array", `[]`, "BAD_REQUEST"},
		{"unknown operator", simple("$.price", "IN_SET", 1), "INVALID_CONDITION"},
		{"is_changed rejected", simple("$.price", "IS_CHANGED", 1), "INVALID_CONDITION"},
		{"missing operator", `{"type":"simple","jsonPath":"$.price","value":1}`, "INVALID_CONDITION"},
		{"object operand", simple("$.price", "EQUALS", raw(`{"a":1}`)), "INVALID_CONDITION"},
		{"object operand on presence", simple("$.price", "IS_NULL", raw(`{}`)), "INVALID_CONDITION"},
		{"array operand", simple("$.price", "EQUALS", raw(`[1]`)), "INVALID_CONDITION"},
		{"between scalar", simple("$.price", "BETWEEN", 1), "BAD_REQUEST"},
		{"between three", simple("$.price", "BETWEEN", raw(`[1,2,3]`)), "BAD_REQUEST"},
		{"between object bound", simple("$.price", "BETWEEN", raw(`[{},2]`)), "INVALID_CONDITION"},
		{"group bad operator", `{"type":"group","operator":"XOR","conditions":[]}`, "INVALID_CONDITION"},
		{"group lower-case or", `{"type":"group","operator":"or","conditions":[]}`, "INVALID_CONDITION"},
		{"not with two", group("NOT", simple("$.price", "IS_NULL", nil), simple("$.price", "IS_NULL", nil)), "INVALID_CONDITION"},
		{"depth 51", deep, "BAD_REQUEST"},
		{"function without name", `{"type":"function","function":{"config":{}}}`, "INVALID_CONDITION"},
		{"array values scalar", `{"type":"array","jsonPath":"$.tags","values":"x"}`, "INVALID_CONDITION"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.cond), testSchema)
			if got := errCode(err); got != tc.code {
				t.Fatalf("got %q (%v), want %s", got, err, tc.code)
			}
		})
	}
	if _, err := Compile([]byte(deep50), testSchema); err != nil {
		t.Fatalf("50 nested groups must be accepted: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, cond, code string
		prop             string // a property that must be present
	}{
		{"no dollar", simple("price", "EQUALS", 1), "INVALID_FIELD_PATH", "path"},
		{"unknown path", simple("$.nope", "EQUALS", 1), "INVALID_FIELD_PATH", "paths"},
		{"array itself", simple("$.tags", "EQUALS", "x"), "INVALID_FIELD_PATH", "paths"},
		{"container with equals", simple("$.nested", "EQUALS", 1), "INVALID_FIELD_PATH", "path"},
		{"bad regex", simple("$.name", "MATCHES_PATTERN", "(a"), "INVALID_CONDITION", "path"},
		{"backreference is not RE2", simple("$.name", "MATCHES_PATTERN", `(a)\1`), "INVALID_CONDITION", ""},
		{"huge regex", simple("$.name", "MATCHES_PATTERN", strings.Repeat("a", MaxRegexLen+1)), "INVALID_CONDITION", ""},
		{"huge like", simple("$.name", "LIKE", strings.Repeat("%a", MaxLikeLen)), "INVALID_CONDITION", "operator"},
		{"type mismatch", simple("$.price", "EQUALS", "abc"), "CONDITION_TYPE_MISMATCH", "operator"},
		{"boolean TRUE", simple("$.flag", "EQUALS", "TRUE"), "CONDITION_TYPE_MISMATCH", "path"},
		{"range bound mismatch", simple("$.price", "BETWEEN", raw(`[1,"x"]`)), "CONDITION_TYPE_MISMATCH", ""},
		{"date mismatch", simple("$.day", "GREATER_THAN", "soon"), "CONDITION_TYPE_MISMATCH", ""},
		{"uuid upper-case", simple("$.uid", "EQUALS", "7E7D0000-0000-0000-0000-000000000000"), "CONDITION_TYPE_MISMATCH", ""},
		{"character two runes", simple("$.ch", "EQUALS", "ab"), "CONDITION_TYPE_MISMATCH", ""},
		{"lifecycle unknown", `{"type":"lifecycle","field":"bogus","operatorType":"EQUALS","value":"x"}`, "INVALID_FIELD_PATH", "field"},
		{"lifecycle date", `{"type":"lifecycle","field":"creationDate","operatorType":"GREATER_THAN","value":"yesterday"}`, "CONDITION_TYPE_MISMATCH", "field"},
		{"array unknown", `{"type":"array","jsonPath":"$.nope","values":[1]}`, "INVALID_FIELD_PATH", ""},
		{"array type", `{"type":"array","jsonPath":"$.nums","values":["x"]}`, "CONDITION_TYPE_MISMATCH", ""},
		{"bad subscript", simple("$.tags[x]", "EQUALS", "a"), "INVALID_FIELD_PATH", ""},
		{"empty segment", simple("$..a", "EQUALS", "a"), "INVALID_FIELD_PATH", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.cond), testSchema)
			if got := errCode(err); got != tc.code {
				t.Fatalf("got %q (%v), want %s", got, err, tc.code)
			}
			if tc.prop != "" {
				e, _ := apierr.As(err)
				found := false
				for _, p := range e.Props {
					found = found || p.Key == tc.prop
				}
				if !found {
					t.Fatalf("error %v lacks property %q", err, tc.prop)
				}
			}
		})
	}
	// Every unknown path is listed; path errors beat regex and type errors.
	_, err := Compile([]byte(group("AND", simple("$.a", "EQUALS", 1), simple("$.name", "MATCHES_PATTERN", "("),
		simple("$.price", "EQUALS", "x"), simple("$.b", "EQUALS", 1))), testSchema)
	if e, ok := apierr.As(err); !ok || e.Code.String() != "INVALID_FIELD_PATH" || !strings.Contains(e.Message, "$.a, $.b") {
		t.Fatalf("got %v", err)
	}
	_, err = Compile([]byte(group("AND", simple("$.price", "EQUALS", "x"), simple("$.name", "MATCHES_PATTERN", "("))), testSchema)
	if errCode(err) != "INVALID_CONDITION" {
		t.Fatalf("regex error must precede type error: %v", err)
	}
}

type ent struct {
	doc  string
	meta *Meta
}

func run(t *testing.T, cond string, s Schema, ents map[string]ent) []string {
	t.Helper()
	c := mustCompile(t, cond, s)
	var out []string
	for _, id := range sortedKeys(ents) {
		m := c.Match([]byte(ents[id].doc), ents[id].meta)
		if md := c.MatchDoc(NewDoc([]byte(ents[id].doc)), ents[id].meta); md != m {
			t.Fatalf("%s on %s: Match %v, MatchDoc %v", cond, ents[id].doc, m, md)
		}
		if m {
			out = append(out, id)
		}
	}
	return out
}

func sortedKeys(m map[string]ent) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

var corpus = map[string]ent{
	"a": {doc: `{"price":12,"amount":1.5,"name":"alpha","poly":30,"flag":true,"day":"2024-09-08","year":"2024","tags":["x","y"],"nums":[1,2],"laureates":[{"first":"John"},{"first":"Geoff"}],"nested":{"k":5,"s":"Beta"}}`},
	"b": {doc: `{"price":13,"amount":2.25,"name":"Beta","poly":"30","flag":false,"day":"2024-09-09","year":"2025","tags":["z"],"nums":[3],"laureates":[{"first":"John"}],"nested":{"k":10.0}}`},
	"c": {doc: `{"price":100,"name":"delta","poly":"s-1","day":"2024-09-10","tags":[],"laureates":[],"nested":null}`},
	"d": {doc: `{"price":null,"name":"eta_\u0062\"q\"","ch":"é"}`},
	"e": {doc: `{"name":"gamma%"}`},
}

func TestEvaluation(t *testing.T) {
	cases := []struct {
		name string
		cond string
		want string
	}{
		{"equals int", simple("$.price", "EQUALS", 12), "a"},
		{"string operand on int", simple("$.price", "EQUALS", "12"), "a"},
		{"exponent operand", simple("$.price", "EQUALS", "1E2"), "c"},
		{"10.0 equals 10", simple("$.nested.k", "EQUALS", raw("10.0")), "b"},
		{"ge rounds", simple("$.price", "GREATER_OR_EQUAL", 12.78), "b c"},
		{"le rounds", simple("$.price", "LESS_OR_EQUAL", 12.78), "a"},
		{"void equals", simple("$.price", "EQUALS", 12.5), ""},
		{"void inside and", group("AND", simple("$.price", "EQUALS", 12.5), simple("$.price", "NOT_NULL", nil)), ""},
		{"void inside or", group("OR", simple("$.price", "EQUALS", 12.5), simple("$.price", "EQUALS", 13)), "b"},
		{"not equal skips null and absent", simple("$.price", "NOT_EQUAL", 12), "b c"},
		{"not contains skips absent", simple("$.nested.s", "NOT_CONTAINS", "zz"), "a"},
		{"inot equal skips absent", simple("$.nested.s", "INOT_EQUAL", "zz"), "a"},
		{"is null", simple("$.price", "IS_NULL", nil), "d e"},
		{"not null", simple("$.price", "NOT_NULL", nil), "a b c"},
		{"container not null", simple("$.nested", "NOT_NULL", nil), "a b"},
		{"between exclusive", simple("$.price", "BETWEEN", raw(`[12,100]`)), "b"},
		{"between inclusive", simple("$.price", "BETWEEN_INCLUSIVE", raw(`[12,100]`)), "a b c"},
		{"polymorphic number and string", simple("$.poly", "EQUALS", "30"), "a b"},
		{"polymorphic string only", simple("$.poly", "EQUALS", "s-1"), "c"},
		{"contains on number never", simple("$.price", "CONTAINS", 1), ""},
		{"boolean", simple("$.flag", "EQUALS", true), "a"},
		{"boolean string operand", simple("$.flag", "EQUALS", "false"), "b"},
		{"boolean ordering never", simple("$.flag", "GREATER_THAN", false), ""},
		{"like suffix", simple("$.name", "LIKE", "%ta"), "b c"},
		{"like one char", simple("$.name", "LIKE", "_eta"), "b"},
		{"like escaped percent", simple("$.name", "LIKE", `gamma\%`), "e"},
		{"like percent literal needed", simple("$.name", "LIKE", `gamma\%x`), ""},
		{"like dot literal", simple("$.name", "LIKE", "a.pha"), ""},
		{"regex anchored", simple("$.name", "MATCHES_PATTERN", "[a-c].*"), "a"},
		{"regex partial no", simple("$.name", "MATCHES_PATTERN", "lph"), ""},
		{"regex case flag", simple("$.name", "MATCHES_PATTERN", "(?i)b.*"), "b"},
		{"iequals", simple("$.name", "IEQUALS", "beta"), "b"},
		{"icontains", simple("$.name", "ICONTAINS", "ELT"), "c"},
		{"istarts", simple("$.name", "ISTARTS_WITH", "BE"), "b"},
		{"starts", simple("$.name", "STARTS_WITH", "Be"), "b"},
		{"ends", simple("$.name", "ENDS_WITH", "ta"), "b c"},
		{"not ends", simple("$.name", "NOT_ENDS_WITH", "ta"), "a d e"},
		{"escaped stored string", simple("$.name", "EQUALS", `eta_b"q"`), "d"},
		{"byte order", simple("$.name", "LESS_THAN", "alpha"), "b"},
		{"date ge", simple("$.day", "GREATER_OR_EQUAL", "2024-09-09"), "b c"},
		{"year downscale", simple("$.year", "GREATER_OR_EQUAL", "2024-09-09"), "b"},
		{"year upscale", simple("$.day", "LESS_THAN", "2024-09-09T00:00:00Z"), "a"},
		{"scalar wildcard", simple("$.tags[*]", "EQUALS", "z"), "b"},
		{"scalar wildcard not null", simple("$.tags[*]", "NOT_NULL", nil), "a b"},
		{"wildcard is null", simple("$.tags[*]", "IS_NULL", nil), "c d e"},
		{"object wildcard negative existential", simple("$.laureates[*].first", "NOT_EQUAL", "John"), "a"},
		{"index subscript", simple("$.tags[1]", "EQUALS", "y"), "a"},
		{"character", simple("$.ch", "EQUALS", "é"), "d"},
		{"empty and", group("AND"), "a b c d e"},
		{"empty or", group("OR"), ""},
		{"not", group("NOT", simple("$.price", "EQUALS", 12)), "b c d e"},
		{"array positional", `{"type":"array","jsonPath":"$.tags","values":["x",null]}`, "a"},
		{"array value alias", `{"type":"array","jsonPath":"$.tags","value":[null,"y"]}`, "a"},
		{"array all null", `{"type":"array","jsonPath":"$.nums","values":[null]}`, "a b c d e"},
		{"array missing element", `{"type":"array","jsonPath":"$.nums","values":[3,4]}`, ""},
		{"null operand matches nothing", simple("$.price", "EQUALS", nil), ""},
		{"no declared type", simple("$.onlynull", "EQUALS", 1), ""},
		{"operation alias", `{"type":"simple","jsonPath":"$.price","operation":"EQUALS","value":13}`, "b"},
		{"not equals alias", simple("$.price", "NOT_EQUALS", 12), "b c"},
		// The Python client template's spellings (issue 13 item 7).
		{"greater than or equal alias", simple("$.price", "GREATER_THAN_OR_EQUAL", 13), "b c"},
		{"less than or equal alias", simple("$.price", "LESS_THAN_OR_EQUAL", 13), "a b"},
		{"in", simple("$.price", "IN", raw(`[12,100,7]`)), "a c"},
		{"in strings", simple("$.name", "IN", raw(`["Beta","delta"]`)), "b c"},
		{"in by value", simple("$.nested.k", "IN", raw(`[10]`)), "b"},
		{"in empty", simple("$.price", "IN", raw(`[]`)), ""},
		{"in wildcard", simple("$.tags[*]", "IN", raw(`["y","z"]`)), "a b"},
		{"not in skips null and absent", simple("$.price", "NOT_IN", raw(`[12,7]`)), "b c"},
		{"not in empty", simple("$.price", "NOT_IN", raw(`[]`)), "a b c"},
		{"not in wildcard", simple("$.tags[*]", "NOT_IN", raw(`["y"]`)), "b"},
		{"in inside a group", group("AND", simple("$.price", "IN", raw(`[12,13]`)), simple("$.flag", "EQUALS", false)), "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(run(t, tc.cond, testSchema, corpus), " ")
			if got != tc.want {
				t.Fatalf("%s\n got [%s] want [%s]", tc.cond, got, tc.want)
			}
		})
	}
}

func TestUntyped(t *testing.T) {
	// Without a schema every kind of stored value is compared in its own
	// family, and unknown paths are not errors.
	got := strings.Join(run(t, simple("$.poly", "EQUALS", 30), nil, corpus), " ")
	if got != "a b" {
		t.Fatalf("got %q", got)
	}
	got = strings.Join(run(t, simple("$.nope", "IS_NULL", nil), nil, corpus), " ")
	if got != "a b c d e" {
		t.Fatalf("got %q", got)
	}
}

func TestLifecycle(t *testing.T) {
	created := time.Date(2024, 5, 1, 10, 20, 50, 837788018, time.UTC)
	ents := map[string]ent{
		"x": {doc: `{}`, meta: &Meta{ID: "7e7d0000-0000-0000-0000-000000000001", State: "APPROVED", CreationDate: created,
			LastUpdateTime: created.Add(time.Hour), TransitionForLatestSave: "approve", TransactionID: "tx1"}},
		"y": {doc: `{}`, meta: &Meta{ID: "8e7d0000-0000-0000-0000-000000000002", State: "NEW", CreationDate: created.AddDate(-1, 0, 0)}},
		"z": {doc: `{}`},
	}
	lc := func(field, op string, v any) string {
		return fmt.Sprintf(`{"type":"lifecycle","field":%q,"operatorType":%q,"value":%s}`, field, op, jsonOf(v))
	}
	cases := []struct{ cond, want string }{
		{lc("state", "EQUALS", "APPROVED"), "x"},
		{lc("state", "NOT_EQUAL", "APPROVED"), "y"},
		{lc("current_state", "EQUALS", "APPROVED"), "x"},
		{lc("current_state", "IN", raw(`["NEW","GONE"]`)), "y"},
		{lc("state", "NOT_IN", raw(`["NEW"]`)), "x"},
		{lc("creationDate", "EQUALS", "2024-05-01T10:20:50.837Z"), "x"},
		{lc("creationDate", "GREATER_THAN", "2024"), "x"},
		{lc("creationDate", "LESS_THAN", "2024-05-01"), "y"},
		{lc("creationDate", "CONTAINS", "20"), ""},
		{lc("lastUpdateTime", "IS_NULL", nil), "y z"},
		{lc("previousTransition", "EQUALS", "approve"), "x"},
		{lc("transitionForLatestSave", "NOT_NULL", nil), "x y"},
		{lc("id", "STARTS_WITH", "7e7d"), "x"},
		{lc("state", "IEQUALS", "new"), "y"},
		{lc("state", "LIKE", "APP%"), "x"},
		{lc("state", "MATCHES_PATTERN", "N.W"), "y"},
		{lc("creationDate", "BETWEEN_INCLUSIVE", raw(`["2023-05-01T10:20:50.837Z","2024-05-01T10:20:50.837Z"]`)), "x y"},
	}
	for _, tc := range cases {
		got := strings.Join(run(t, tc.cond, testSchema, ents), " ")
		if got != tc.want {
			t.Errorf("%s: got [%s] want [%s]", tc.cond, got, tc.want)
		}
	}
}

type fnCaller struct {
	calls  int
	answer bool
}

func (f *fnCaller) CallFunction(fn *Function) (bool, error) {
	f.calls++
	return f.answer && fn.Name == "ok", nil
}

func TestFunction(t *testing.T) {
	cond := group("AND", simple("$.price", "EQUALS", 12),
		`{"type":"function","function":{"name":"ok","config":{"attachEntity":true}}}`)
	c := mustCompile(t, cond, testSchema)
	if !c.HasFunctions() || c.Functions()[0].Name != "ok" || string(c.Functions()[0].Config) != `{"attachEntity":true}` {
		t.Fatalf("functions: %+v", c.Functions())
	}
	fc := &fnCaller{answer: true}
	if ok, err := c.Eval([]byte(corpus["a"].doc), nil, fc); !ok || err != nil || fc.calls != 1 {
		t.Fatalf("eval a: %v %v %d", ok, err, fc.calls)
	}
	// Short-circuit: the function is not called when the first child fails.
	if ok, err := c.Eval([]byte(corpus["b"].doc), nil, fc); ok || err != nil || fc.calls != 1 {
		t.Fatalf("eval b: %v %v %d", ok, err, fc.calls)
	}
	if _, err := c.Eval([]byte(corpus["a"].doc), nil, nil); err != ErrNoFunctionCaller {
		t.Fatalf("want ErrNoFunctionCaller, got %v", err)
	}
	if c.Match([]byte(corpus["a"].doc), nil) {
		t.Fatal("Match cannot answer a function condition")
	}
}

func TestDecimal(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"10", "10.0", 0}, {"1e2", "100", 0}, {"0.001", "1e-3", 0}, {"-0", "0", 0},
		{"12345678901234567890123", "12345678901234567890124", -1},
		{"0.1", "0.10000000000000000001", -1}, {"-5", "3", -1}, {"-5", "-3", -1},
		{"1e1000000", "9e999999", 1}, {"007", "7", 0}, {".5", "0.5", 0}, {"5.", "5", 0},
	}
	for _, tc := range cases {
		x, ok1 := parseDec([]byte(tc.a), true)
		y, ok2 := parseDec([]byte(tc.b), true)
		if !ok1 || !ok2 {
			t.Fatalf("parse %s %s", tc.a, tc.b)
		}
		if got := cmpDec(&x, &y); got != tc.want {
			t.Errorf("cmp(%s,%s)=%d want %d", tc.a, tc.b, got, tc.want)
		}
		// the canonical text reads back as the same value
		z, ok := parseDec([]byte(x.text()), false)
		if !ok || cmpDec(&x, &z) != 0 {
			t.Errorf("text round trip of %s: %s", tc.a, x.text())
		}
	}
	for _, bad := range []string{"", "-", "1e", "abc", "1.2.3", "0x10", "1e+"} {
		if _, ok := parseDec([]byte(bad), true); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	for _, bad := range []string{"007", ".5", "5.", "+5"} {
		if _, ok := parseDec([]byte(bad), false); ok {
			t.Errorf("%q parsed as JSON", bad)
		}
	}
}

func TestTemporal(t *testing.T) {
	cases := []struct {
		in  string
		typ DataType
		ms  int64
	}{
		{"2024", TypeYear, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"2024-09", TypeYearMonth, time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"2024-09-09", TypeLocalDate, time.Date(2024, 9, 9, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"2024-09-09T10:11", TypeLocalDateTime, time.Date(2024, 9, 9, 10, 11, 0, 0, time.UTC).UnixMilli()},
		{"2024-09-09T10:11:12.3456Z", TypeZonedDateTime, time.Date(2024, 9, 9, 10, 11, 12, 345600000, time.UTC).UnixMilli()},
		{"2024-09-09T10:11:12+02:00", TypeZonedDateTime, time.Date(2024, 9, 9, 8, 11, 12, 0, time.UTC).UnixMilli()},
		{"10:11:12", TypeLocalTime, 10*3600000 + 11*60000 + 12000},
	}
	for _, tc := range cases {
		typ, ms, ok := classifyTemporal([]byte(tc.in))
		if !ok || typ != tc.typ || ms != tc.ms {
			t.Errorf("%s: %v %d %v", tc.in, typ, ms, ok)
		}
	}
	for _, bad := range []string{"2024-13", "2024-02-30", "24:00", "2024-09-09T10", "2024-09-09 10:11", "yesterday", "123"} {
		if _, _, ok := classifyTemporal([]byte(bad)); ok {
			t.Errorf("%q classified", bad)
		}
	}
}

// TestConcurrentUse: one compiled Condition is shared by many goroutines
// (run with -race).
func TestConcurrentUse(t *testing.T) {
	c := mustCompile(t, group("OR", simple("$.name", "MATCHES_PATTERN", "B.*"), simple("$.tags[*]", "EQUALS", "x"),
		simple("$.name", "ICONTAINS", "ELT")), testSchema)
	want := strings.Join(run(t, group("OR", simple("$.name", "MATCHES_PATTERN", "B.*"), simple("$.tags[*]", "EQUALS", "x"),
		simple("$.name", "ICONTAINS", "ELT")), testSchema, corpus), " ")
	done := make(chan string)
	for range 8 {
		go func() {
			var got []string
			for range 200 {
				got = got[:0]
				for _, id := range sortedKeys(corpus) {
					if c.MatchDoc(NewDoc([]byte(corpus[id].doc)), nil) {
						got = append(got, id)
					}
				}
			}
			done <- strings.Join(got, " ")
		}()
	}
	for range 8 {
		if got := <-done; got != want || want != "a b c" {
			t.Fatalf("got %q want %q (a b c)", got, want)
		}
	}
}

// TestMatchAllocations holds the zero-allocation budget of the hot path.
func TestMatchAllocations(t *testing.T) {
	doc := benchDoc(7)
	prepared := NewDoc(doc)
	for _, cond := range []string{simple("$.status", "EQUALS", "OPEN"), simple("$.price", "GREATER_THAN", 3),
		group("AND", simple("$.address.city", "STARTS_WITH", "Spr"), simple("$.tags[*]", "EQUALS", "blue"),
			simple("$.items[*].qty", "BETWEEN", raw("[1,3]")), simple("$.name", "MATCHES_PATTERN", "cust.*"))} {
		c := mustCompile(t, cond, benchSchema)
		if n := testing.AllocsPerRun(100, func() { c.Match(doc, nil) }); n != 0 {
			t.Errorf("Match %s: %v allocs", cond, n)
		}
		if n := testing.AllocsPerRun(100, func() { c.MatchDoc(prepared, nil) }); n != 0 {
			t.Errorf("MatchDoc %s: %v allocs", cond, n)
		}
	}
}

func TestLenientSchema(t *testing.T) {
	ents := map[string]ent{"a": {doc: `{"extra":"abc","n":5}`}, "b": {doc: `{}`}}
	s := Lenient(testSchema)
	for _, tc := range []struct{ cond, want string }{
		{simple("$.extra", "CONTAINS", "b"), "a"},
		{simple("$.extra", "NOT_NULL", nil), "a"},
		{simple("$.n", "EQUALS", 5), ""},
		{simple("$.price", "IS_NULL", nil), "a b"},
	} {
		if got := strings.Join(run(t, tc.cond, s, ents), " "); got != tc.want {
			t.Errorf("%s: got [%s] want [%s]", tc.cond, got, tc.want)
		}
	}
	if _, err := Compile([]byte(simple("$.extra", "EQUALS", 5)), testSchema); errCode(err) != "INVALID_FIELD_PATH" {
		t.Fatalf("strict schema must reject: %v", err)
	}
}
