package infer

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// Seeds live in testdata/fuzz/<FuzzName>/; the f.Add calls keep a minimal
// set in code so a fresh checkout fuzzes something meaningful.

// FuzzTokenizer: the tokenizer agrees with encoding/json on what is valid
// JSON (for valid UTF-8 within the depth bound), never panics, and every
// call makes progress.
func FuzzTokenizer(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e-3,"x\u00e9",true,false,null,{}]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tok tokenizer
		lim := Limits{MaxDepth: 10000, MaxNumberDigits: 1 << 30, MaxStringBytes: 1 << 30}.withDefaults()
		tok.reset(data, lim)
		valid := true
		for steps := 0; ; steps++ {
			if steps > len(data)+1 {
				t.Fatalf("no progress after %d tokens", steps)
			}
			k, _, err := tok.next()
			if err != nil {
				valid = false
				break
			}
			if k == tokEOF {
				break
			}
		}
		if utf8.Valid(data) && valid != json.Valid(data) {
			t.Fatalf("tokenizer valid=%v, encoding/json valid=%v for %q", valid, json.Valid(data), data)
		}
	})
}

// FuzzIngest: any input either fails with an API error and leaves the model
// alone, or widens it so that the export round-trips, re-ingestion changes
// nothing, and strict Check admits the document.
func FuzzIngest(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",null],"o":{"p":1.5},"l":[{"k":true}],"m":[[1],[2,3]]}`))
	f.Add([]byte(`[{"a":1},{"a":"2024-01-15"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := NewModel()
		if err := m.Ingest(data, Limits{}); err != nil {
			apiErr(t, err)
			if export(m) != `{"$":{}}` {
				t.Fatalf("failed ingest changed the model: %s", export(m))
			}
			return
		}
		out := m.AppendSimpleViewExport(nil, false)
		back, err := ParseSimpleView(out, Limits{})
		if err != nil {
			t.Fatalf("own export does not import: %v\n%s", err, out)
		}
		if again := back.AppendSimpleViewExport(nil, false); !bytes.Equal(again, out) {
			t.Fatalf("export→import→export differs\n%s\n%s", out, again)
		}
		if err := m.Ingest(data, Limits{}); err != nil {
			t.Fatalf("second ingest failed: %v", err)
		}
		if again := m.AppendSimpleViewExport(nil, false); !bytes.Equal(again, out) {
			t.Fatalf("re-ingestion changed the model\n%s\n%s", out, again)
		}
		if w, err := m.Check(data, ChangeNone, Limits{}); err != nil || w != nil {
			t.Fatalf("strict check of an ingested document: %v", err)
		}
		// Against a model of another shape, the fast path of Check must
		// agree with the full comparison.
		base := fuzzBase(t)
		if ok, err := base.fits(data, Limits{}); err != nil {
			t.Fatalf("fits on a valid document: %v", err)
		} else if ok {
			if w, err := base.compare(data, ChangeNone, Limits{}); err != nil || w != nil {
				t.Fatalf("fits, but compare: widened=%v err=%v", w != nil, err)
			}
		}
		// A batch of the document with documents of the base's shape
		// around it gives Check-per-document's answer.
		seq := [][]byte{[]byte(`{"e":{}}`), data, []byte(`{"b":null,"e":null,"n":1}`), data}
		for _, level := range []ChangeLevel{ChangeNone, ChangeType, ChangeStructural} {
			sameOutcome(t, "fuzz", base, seq, level)
		}
		if !json.Valid(m.AppendJSONSchema(nil)) {
			t.Fatalf("JSON_SCHEMA export is not JSON: %s", m.AppendJSONSchema(nil))
		}
	})
}

// FuzzParseSimpleView: any input either fails with an API error or yields a
// model whose export is a fixed point of import → export.
func FuzzParseSimpleView(f *testing.F) {
	f.Add([]byte(`{"currentState":"LOCKED","model":{"$":{".a[*]":"(ARRAY_ELEMENT x 2)","#.a":"OBJECT"},"$.a[*]":[{".k":"STRING","#":"ARRAY_ELEMENT"},"(SHORT x 2)"]}}`))
	f.Add([]byte(`{"$":{".r[*]":["INTEGER","NULL","[BYTE, STRING]"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseSimpleView(data, Limits{})
		if err != nil {
			apiErr(t, err)
			return
		}
		out := m.AppendSimpleViewExport(nil, true)
		if !json.Valid(out) {
			t.Fatalf("export is not JSON: %s", out)
		}
		back, err := ParseSimpleView(out, Limits{})
		if err != nil {
			t.Fatalf("export of an import does not import: %v\n%s", err, out)
		}
		if again := back.AppendSimpleViewExport(nil, true); !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point\n%s\n%s", out, again)
		}
	})
}

func fuzzBase(t *testing.T) *Model {
	return mustIngest(t, NewModel(),
		`{"a":[1,"x",null],"o":{"p":1.5},"l":[{"k":true}],"m":[[1],[2,3]]}`,
		`{"a":"s","b":null,"c":{"d":[{"e":"2024-01-15"}]}}`, `{}`)
}
