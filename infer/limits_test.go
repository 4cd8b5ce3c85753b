package infer

import (
	"strconv"
	"strings"
	"testing"

	"svc/platform/apierr"
)

func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %s error", limit)
	}
	e := apiErr(t, err)
	if e.Code != apierr.BadRequest || prop(e, "limit") != limit || !strings.Contains(e.Message, limit) {
		t.Fatalf("got %s %q %v, want BAD_REQUEST naming %s", e.Code, e.Message, e.Props, limit)
	}
}

func TestLimits(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)
	deepArr := `{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "}"
	var wide strings.Builder
	wide.WriteString(`{"a":[`)
	for i := 0; i < 1001; i++ {
		if i > 0 {
			wide.WriteByte(',')
		}
		wide.WriteByte('1')
	}
	wide.WriteString("]}")
	var many strings.Builder
	many.WriteByte('{')
	for i := 0; i < 101; i++ {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`"f` + strconv.Itoa(i) + `":1`)
	}
	many.WriteByte('}')
	small := Limits{MaxFields: 100, MaxArrayWidth: 1000, MaxNumberDigits: 50, MaxStringBytes: 100, MaxBytes: 1 << 20}
	cases := []struct {
		name, doc, limit string
		lim              Limits
	}{
		{"object depth", deep, "MaxDepth", Limits{}},
		{"array depth", deepArr, "MaxDepth", Limits{}},
		{"array width", wide.String(), "MaxArrayWidth", small},
		{"members", many.String(), "MaxFields", small},
		{"digits", `{"a":` + strings.Repeat("9", 51) + `}`, "MaxNumberDigits", small},
		{"exponent digits", `{"a":1e` + strings.Repeat("9", 60) + `}`, "MaxNumberDigits", small},
		{"string", `{"a":"` + strings.Repeat("s", 101) + `"}`, "MaxStringBytes", small},
		{"key", `{"` + strings.Repeat("k", 101) + `":1}`, "MaxStringBytes", small},
		{"dotted name", `{"` + strings.Repeat("a.", 300) + `b":1}`, "MaxDepth", Limits{}},
		{"body", `{"a":"` + strings.Repeat("s", 90) + `"}`, "MaxBytes", Limits{MaxBytes: 64}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewModel()
			wantLimit(t, m.Ingest([]byte(tc.doc), tc.lim), tc.limit)
			if export(m) != `{"$":{}}` {
				t.Fatalf("model changed: %s", export(m))
			}
			_, err := m.Check([]byte(tc.doc), ChangeStructural, tc.lim)
			wantLimit(t, err, tc.limit)
		})
	}
	// The default depth admits 256 levels.
	ok := strings.Repeat(`{"a":`, 255) + "1" + strings.Repeat("}", 255)
	if err := NewModel().Ingest([]byte(ok), Limits{}); err != nil {
		t.Fatalf("255 nested objects: %v", err)
	}
}

func TestParseSimpleViewLimits(t *testing.T) {
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{".a[*]":"(STRING x 1000000000)"}}`), Limits{})
		return err
	}(), "MaxArrayWidth")
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{".a[*]":"(STRING x 11)"}}`), Limits{MaxArrayWidth: 10})
		return err
	}(), "MaxArrayWidth")
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{".a":"STRING",".b":"STRING"}}`), Limits{MaxFields: 1})
		return err
	}(), "MaxFields")
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(strings.Repeat("[", 300)), Limits{})
		return err
	}(), "MaxDepth")
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{"`+strings.Repeat(".a", 300)+`":"STRING"}}`), Limits{})
		return err
	}(), "MaxDepth")
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{},"$`+strings.Repeat(".a[*]", 200)+`":"(STRING x 1)"}`), Limits{})
		return err
	}(), "MaxDepth")
	// A node's path and its keys nest together.
	wantLimit(t, func() error {
		_, err := ParseSimpleView([]byte(`{"$":{},"$`+strings.Repeat(".a[*]", 60)+`":{"`+strings.Repeat(".b", 140)+`":"STRING"}}`), Limits{})
		return err
	}(), "MaxDepth")
}

// Huge exponents are classified from their digits: no big numbers are
// built, so the work and memory are those of reading the literal.
func TestHugeExponentsAreCheap(t *testing.T) {
	cases := map[string]string{
		`{"v":1e100000000}`:               "UNBOUND_INTEGER",
		`{"v":1e1000000000}`:              "UNBOUND_INTEGER",
		`{"v":-1e999999999999999999}`:     "UNBOUND_INTEGER",
		`{"v":1e-100000000}`:              "UNBOUND_DECIMAL",
		`{"v":123.456e-999999999999}`:     "UNBOUND_DECIMAL",
		`{"v":0e999999999999}`:            "INTEGER",
		`{"v":1.5e300}`:                   "UNBOUND_INTEGER",
		`{"v":100000000000000000000e-20}`: "INTEGER",
	}
	for doc, want := range cases {
		m := NewModel()
		allocs := testing.AllocsPerRun(5, func() {
			m = NewModel()
			if err := m.Ingest([]byte(doc), Limits{}); err != nil {
				t.Fatal(err)
			}
		})
		if got := export(m); got != `{"$":{".v":"`+want+`"}}` {
			t.Errorf("%s: %s, want %s", doc, got, want)
		}
		// A handful for the model's map and slot, independent of the
		// exponent.
		if allocs > 10 && !raceEnabled {
			t.Errorf("%s: %v allocations", doc, allocs)
		}
	}
}

func TestFieldNamesWithReservedSuffixAreRejected(t *testing.T) {
	for _, doc := range []string{`{"a[*]":1}`, `{"o":{"a\u005b*]":1}}`} {
		err := NewModel().Ingest([]byte(doc), Limits{})
		if e := apiErr(t, err); e.Code != apierr.BadRequest || !strings.Contains(e.Message, "[*]") {
			t.Fatalf("%s: %v", doc, err)
		}
	}
}

// Whatever Ingest admits exports as SIMPLE_VIEW that imports again under the
// same limits.
func TestDeepestModelRoundTrips(t *testing.T) {
	lim := Limits{MaxDepth: 40}
	docs := []string{
		strings.Repeat(`{"a":`, 37) + `{"x.y":[[1]]}` + strings.Repeat("}", 37),
		strings.Repeat(`{"a":[`, 19) + `{"b":1}` + strings.Repeat("]}", 19),
		`{"` + strings.Repeat("d.", 38) + `e":[1]}`,
	}
	for _, d := range docs {
		m := NewModel()
		if err := m.Ingest([]byte(d), lim); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		out := m.AppendSimpleViewExport(nil, false)
		back, err := ParseSimpleView(out, lim)
		if err != nil {
			t.Fatalf("%s: re-import: %v\n%s", d, err, out)
		}
		if string(back.AppendSimpleViewExport(nil, false)) != string(out) {
			t.Fatalf("%s: round trip differs", d)
		}
	}
}
