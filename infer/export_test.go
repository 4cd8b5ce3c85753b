package infer

import (
	"strings"
	"svc/platform/apierr"
	"testing"
)

// Exports for shapes no vector covers; each is a decision recorded in the
// package documentation, and each must survive export→import→export.
func TestExportUnspecifiedShapes(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"empty array", `{"a":[]}`, `{"$":{".a[*]":"(NULL x 0)"}}`},
		{"empty array then values", `{"a":[]}|{"a":[1,2]}`, `{"$":{".a[*]":"(BYTE x 2)"}}`},
		{"null next to an object is not printed", `{"a":null}|{"a":{"b":1}}`, `{"$":{".a.b":"INTEGER"}}`},
		{"null next to an array is not printed", `{"a":null}|{"a":[true]}`, `{"$":{".a[*]":"(BOOLEAN x 1)"}}`},
		{"null-only field", `{"a":null}`, `{"$":{".a":"NULL"}}`},
		{"three dimensions", `{"a":[[[1,2]]]}`,
			`{"$":{".a[*]":"(ARRAY_ELEMENT x 1)","#.a":"OBJECT"},"$.a[*]":"(ARRAY_ELEMENT x 1)","$.a[*][*]":"(BYTE x 2)"}`},
		{"arrays of arrays of objects", `{"a":[[{"k":1}]]}`,
			`{"$":{".a[*]":"(ARRAY_ELEMENT x 1)","#.a":"OBJECT"},"$.a[*]":"(ARRAY_ELEMENT x 1)","$.a[*][*]":{".k":"INTEGER","#":"ARRAY_ELEMENT"}}`},
		{"primitives next to objects", `{"a":[{"k":1},"x"]}`,
			`{"$":{".a[*]":["NULL","STRING"],"#.a":"OBJECT"},"$.a[*]":{".k":"INTEGER","#":"ARRAY_ELEMENT"}}`},
		{"null elements next to objects are absorbed", `{"a":[{"k":1},null]}`,
			`{"$":{"#.a":"OBJECT"},"$.a[*]":{".k":"INTEGER","#":"ARRAY_ELEMENT"}}`},
		{"empty objects in an array", `{"a":[{}]}`, `{"$":{"#.a":"OBJECT"},"$.a[*]":{"#":"ARRAY_ELEMENT"}}`},
		{"inlined array of objects", `{"o":{"l":[{"k":true}]}}`,
			`{"$":{"#.o.l":"OBJECT"},"$.o.l[*]":{".k":"BOOLEAN","#":"ARRAY_ELEMENT"}}`},
		{"names written raw", `{"with space":1,"ünï":2,"":3}`, `{"$":{".":"INTEGER",".with space":"INTEGER",".ünï":"INTEGER"}}`},
		{"mixed-array integers floor at INTEGER", `{"a":[1,"x"]}`, `{"$":{".a[*]":["INTEGER","STRING"]}}`},
		{"all-integer array takes the widest member's class", `{"a":[1,300,70000]}`, `{"$":{".a[*]":"(INTEGER x 3)"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustIngest(t, NewModel(), strings.Split(tc.doc, "|")...)
			got := export(m)
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			back, err := ParseSimpleView([]byte(got), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if again := export(back); again != got {
				t.Fatalf("round trip: %s", again)
			}
		})
	}
}

func TestParseSimpleViewRejects(t *testing.T) {
	for _, in := range []string{
		`[]`, `{}`, `{"model":{}}`, `{"currentState":"OPEN","model":{"$":{}}}`,
		`{"currentState":"LOCKED","model":{"$":{}},"uniqueKeys":[]}`,
		`{"$":{".a":"FOO"}}`, `{"$":{".a":"[INTEGER,STRING]"}}`, `{"$":{".a":1}}`,
		`{"$":{".a[*]":"(STRING x -1)"}}`, `{"$":{".a[*]":"(STRING x 01)"}}`, `{"$":{".a[*]":"STRING x 1"}}`,
		`{"$":{".a[*]":[]}}`, `{"$":{".a[*]":[1]}}`, `{"$":{"a":"STRING"}}`, `{"$":{"#":"ARRAY_ELEMENT"}}`,
		`{"$":{"#.a":"ARRAY"}}`, `{"$":[]}`, `{"$":{}, "x":{}}`, `{"$":{}, "$.a":{}}`,
		`{"$":{}, "$.a[*]":[{}, "(STRING x 1)", "x"]}`, `{"$":{".a[*].b":"STRING"}}`,
	} {
		_, err := ParseSimpleView([]byte(in), Limits{})
		if err == nil {
			t.Errorf("%s accepted", in)
			continue
		}
		if e := apiErr(t, err); e.Code != apierr.BadRequest {
			t.Errorf("%s: %s", in, e.Code)
		}
	}
}

func TestIngestWarmModelAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	docs := nestedDocs(20)
	m := NewModel()
	for _, d := range docs {
		if err := m.Ingest(d, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		if err := m.Ingest(docs[i%len(docs)], Limits{}); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per document on a model that has seen the shape", allocs)
	}
}

func TestJSONSchemaShape(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"a":1,"s":"2024-01-15","o":{"b":true},"l":[1,"x"],"n":null,"r":[{"k":1.5}]}`, `{"a":"x"}`)
	got := string(m.AppendJSONSchema(nil))
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{` +
		`"a":{"anyOf":[{"type":["integer","null"]},{"type":["string","null"]}]},` +
		`"l":{"type":["array","null"],"items":{"anyOf":[{"type":["integer","null"]},{"type":["string","null"]}]}},` +
		`"n":{"type":"null"},` +
		`"o":{"type":["object","null"],"properties":{"b":{"type":["boolean","null"]}}},` +
		`"r":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"k":{"type":["number","null"]}}}},` +
		`"s":{"type":["string","null"],"format":"date"}}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	s := compileSchema(t, "m.json", []byte(got))
	if err := validateJSON(t, s, []byte(`{"a":true}`)); err == nil {
		t.Fatal("schema admits a boolean where the model has INTEGER and STRING")
	}
	if err := validateJSON(t, s, []byte(`{"l":[2,"y",null],"o":null,"r":[{"k":2}]}`)); err != nil {
		t.Fatal(err)
	}
}
