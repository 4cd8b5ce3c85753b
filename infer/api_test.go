package infer

import (
	"errors"
	"testing"

	"svc/platform/apierr"
)

func mustIngest(t testing.TB, m *Model, docs ...string) *Model {
	t.Helper()
	for _, d := range docs {
		if err := m.Ingest([]byte(d), Limits{}); err != nil {
			t.Fatalf("ingest %s: %v", d, err)
		}
	}
	return m
}

func export(m *Model) string { return string(m.AppendSimpleView(nil)) }

func apiErr(t testing.TB, err error) *apierr.Error {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *apierr.Error", err, err)
	}
	return e
}

func prop(e *apierr.Error, key string) any {
	for _, p := range e.Props {
		if p.Key == key {
			return p.Value
		}
	}
	return nil
}

func TestNewModelExportsRootOnly(t *testing.T) {
	if got := export(NewModel()); got != `{"$":{}}` {
		t.Fatalf("got %s", got)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"a":1,"l":[1,2],"o":[{"k":"x"}]}`)
	c := m.Clone()
	if !c.Equal(m) {
		t.Fatalf("clone differs: %s vs %s", export(c), export(m))
	}
	mustIngest(t, c, `{"a":"x","l":[1,2,3],"o":[{"k":1,"n":true}],"new":null}`)
	if c.Equal(m) {
		t.Fatal("widening the clone did not change it")
	}
	if got, want := export(m), `{"$":{".a":"INTEGER",".l[*]":"(BYTE x 2)","#.o":"OBJECT"},"$.o[*]":{".k":"STRING","#":"ARRAY_ELEMENT"}}`; got != want {
		t.Fatalf("original changed:\n got %s\nwant %s", got, want)
	}
}

func TestMergeEqualsIngestingBoth(t *testing.T) {
	a := mustIngest(t, NewModel(), `{"v":"x","a":[1]}`)
	b := mustIngest(t, NewModel(), `{"v":2147483648,"a":["s","t"]}`)
	both := mustIngest(t, NewModel(), `{"v":"x","a":[1]}`, `{"v":2147483648,"a":["s","t"]}`)
	a.Merge(b)
	if !a.Equal(both) {
		t.Fatalf("merge %s != ingest %s", export(a), export(both))
	}
	if got := export(b); got != `{"$":{".a[*]":"(STRING x 2)",".v":"LONG"}}` {
		t.Fatalf("merge modified its argument: %s", got)
	}
}

func TestRootArrayIsABatch(t *testing.T) {
	m := mustIngest(t, NewModel(), `[{"a":1},{"b":"x"}]`)
	if got := export(m); got != `{"$":{".a":"INTEGER",".b":"STRING"}}` {
		t.Fatalf("got %s", got)
	}
}

func TestIngestRejectsNonObjectRoots(t *testing.T) {
	for _, doc := range []string{`1`, `"x"`, `null`, `[1]`, `[{"a":1},2]`, `[[]]`, ``, `   `} {
		m := NewModel()
		err := m.Ingest([]byte(doc), Limits{})
		if err == nil {
			t.Errorf("%q accepted", doc)
			continue
		}
		if e := apiErr(t, err); e.Code != apierr.BadRequest {
			t.Errorf("%q: code %s", doc, e.Code)
		}
		if export(m) != `{"$":{}}` {
			t.Errorf("%q: model changed on error: %s", doc, export(m))
		}
	}
}

func TestIngestIsAtomicOnError(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"a":1}`)
	before := export(m)
	for _, doc := range []string{`{"a":"x","b":`, `{"a":"x","b":[1,2,}`, `{"a":"x"} {}`, `{"a":"x","b":tru}`} {
		if err := m.Ingest([]byte(doc), Limits{}); err == nil {
			t.Fatalf("%q accepted", doc)
		}
		if got := export(m); got != before {
			t.Fatalf("%q changed the model: %s", doc, got)
		}
	}
}

func TestDottedNamesMergeWithNesting(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"a.b":1}`, `{"a":{"b":"x","c":true}}`)
	if got := export(m); got != `{"$":{".a.b":"[INTEGER, STRING]",".a.c":"BOOLEAN"}}` {
		t.Fatalf("got %s", got)
	}
}

func TestEscapedNamesAndStrings(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"n\u0061me":"\u0032024-01-15","q\"uote":1}`)
	got := export(m)
	if want := `{"$":{".name":"LOCAL_DATE",".q\"uote":"INTEGER"}}`; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	back, err := ParseSimpleView([]byte(got), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if export(back) != got {
		t.Fatalf("round trip: %s", export(back))
	}
}

func TestParseChangeLevel(t *testing.T) {
	for s, want := range map[string]ChangeLevel{"": ChangeNone, "ARRAY_LENGTH": ChangeArrayLength,
		"ARRAY_ELEMENTS": ChangeArrayElements, "TYPE": ChangeType, "STRUCTURAL": ChangeStructural} {
		got, err := ParseChangeLevel(s)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
		if got.String() != s {
			t.Errorf("String(%d) = %q, want %q", got, got.String(), s)
		}
	}
	for _, s := range []string{"type", "NONE", "STRUCTURAL ", "x"} {
		_, err := ParseChangeLevel(s)
		e := apiErr(t, err)
		if e.Code != apierr.BadRequest || prop(e, "suppliedValue") != s {
			t.Errorf("%q: %v %v", s, e.Code, e.Props)
		}
	}
}

func TestConcurrentReaders(t *testing.T) {
	m := mustIngest(t, NewModel(), checkBase)
	want := export(m)
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				if got := export(m); got != want {
					err = errors.New("export changed: " + got)
				}
				if _, cerr := m.Check([]byte(`{"age":"x","zzz":[1]}`), ChangeStructural, Limits{}); cerr != nil {
					err = cerr
				}
				m.AppendJSONSchema(nil)
				m.Clone()
			}
			done <- err
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
