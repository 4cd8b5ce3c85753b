package fast

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/model"
	"svc/storage"
)

type svVector struct {
	Name             string          `json:"name"`
	DocsText         []string        `json:"docsText"`
	Expect           json.RawMessage `json:"expect"`
	LockBeforeExport bool            `json:"lockBeforeExport"`
}

func loadVectors(t *testing.T) []svVector {
	t.Helper()
	raw, err := os.ReadFile("../testdata/simple-view-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	// "docs" (unused here; docsText is exact) holds Python's bare
	// Infinity for 1e400, which no JSON parser takes.
	raw = bytes.ReplaceAll(raw, []byte(": Infinity"), []byte(": null"))
	var vs []svVector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 43 {
		t.Fatalf("%d vectors, want 43", len(vs))
	}
	return vs
}

func compact(t testing.TB, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.String()
}

func importPath(format, conv, name string, v int) string {
	return fmt.Sprintf("/model/import/%s/%s/%s/%d", format, conv, name, v)
}

// TestModelVectorsOverHTTP imports every vector's documents in order,
// exports SIMPLE_VIEW byte for byte, then imports that export with the
// SIMPLE_VIEW converter into a fresh model and gets the same bytes back.
func TestModelVectorsOverHTTP(t *testing.T) {
	t.Parallel()
	vs := loadVectors(t)
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		for i, v := range vs {
			name := fmt.Sprintf("v%02d", i)
			for _, d := range v.DocsText {
				r := e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", name, 1), []byte(d))
				if r.status != 200 || string(r.body) != `"`+model.ID(storage.ModelKey{Name: name, Version: 1})+`"` || r.ctype != "application/json" {
					t.Fatalf("%s: import %s: %d %s", v.Name, d, r.status, r.body)
				}
			}
			if v.LockBeforeExport {
				e.call("A", "PUT", "/model/"+name+"/1/lock", nil)
			}
			r := e.call("A", "GET", "/model/export/SIMPLE_VIEW/"+name+"/1", nil)
			want := compact(t, v.Expect)
			if r.status != 200 || string(r.body) != want {
				t.Errorf("%s:\n got %s\nwant %s", v.Name, r.body, want)
				continue
			}
			rt := e.call("A", "POST", importPath("JSON", "SIMPLE_VIEW", name+"-rt", 1), r.body)
			if rt.status != 200 {
				t.Fatalf("%s: SIMPLE_VIEW import: %d %s", v.Name, rt.status, rt.body)
			}
			if v.LockBeforeExport {
				e.call("A", "PUT", "/model/"+name+"-rt/1/lock", nil)
			}
			again := e.call("A", "GET", "/model/export/SIMPLE_VIEW/"+name+"-rt/1", nil)
			if string(again.body) != want {
				t.Errorf("%s: export→import→export\n got %s\nwant %s", v.Name, again.body, want)
			}
		}
	})
}

func TestModelImportMergesAndIsIdempotent(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		p := importPath("JSON", "SAMPLE_DATA", "m", 1)
		e.call("A", "POST", p, []byte(`{"a":1}`))
		e.call("A", "POST", "/model/m/1/changeLevel/TYPE", nil)
		e.call("A", "PUT", "/model/m/1/unique-keys", []byte(`{"uniqueKeys":[{"id":"k","fields":["$.a"]}]}`))
		e.call("A", "POST", p, []byte(`{"b":"x"}`))
		if r := e.call("A", "GET", "/model/export/SIMPLE_VIEW/m/1", nil); string(r.body) != `{"currentState":"UNLOCKED","model":{"$":{".a":"INTEGER",".b":"STRING"}}}` {
			t.Fatalf("merged: %s", r.body)
		}
		m, _ := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "m", Version: 1})
		if m.ChangeLevel != "TYPE" || len(m.UniqueKeys) == 0 {
			t.Fatalf("import lost change level or keys: %+v", m)
		}
		rev := m.Revision
		if r := e.call("A", "POST", p, []byte(`{"a":7,"b":"y"}`)); r.status != 200 {
			t.Fatal(r.status)
		}
		m, _ = e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "m", Version: 1})
		if m.Revision != rev {
			t.Errorf("re-importing known shapes wrote the model (revision %d→%d)", rev, m.Revision)
		}
		// A merge that turns a key field into a container breaks the key: 422.
		r := e.call("A", "POST", p, []byte(`{"a":{"x":1}}`))
		r.problem(t, 422, "INVALID_UNIQUE_KEY_DEFINITION")
		if !strings.Contains(string(r.body), "re-import invalidates existing unique key definitions") {
			t.Errorf("422 detail: %s", r.body)
		}
		// A locked model takes no import: 409 with props, before the body is read.
		e.call("A", "PUT", "/model/m/1/lock", nil)
		props := e.call("A", "POST", p, []byte(`not json`)).problem(t, 409, "MODEL_ALREADY_LOCKED")
		wantKeyProps(t, props, "m", 1)
	})
}

func TestModelImportErrors(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		props := e.call("A", "POST", importPath("JSON", "JSON_SCHEMA", "m", 1), []byte(`{}`)).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "converter" || props["invalidValue"] != "JSON_SCHEMA" {
			t.Errorf("converter props %v", props)
		}
		props = e.call("A", "POST", importPath("YAML", "SAMPLE_DATA", "m", 1), []byte(`{}`)).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "dataFormat" || props["invalidValue"] != "YAML" {
			t.Errorf("dataFormat props %v", props)
		}
		props = e.call("A", "POST", importPath("XML", "SIMPLE_VIEW", "m", 1), []byte(`<a/>`)).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "dataFormat" {
			t.Errorf("SIMPLE_VIEW as XML props %v", props)
		}
		props = e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", "m", 0x7fffffff+1), []byte(`{}`)).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "modelVersion" {
			t.Errorf("version props %v", props)
		}
		for name, body := range map[string]string{
			"malformed JSON":        `{"a":`,
			"empty body":            ``,
			"scalar root":           `42`,
			"malformed XML":         `<a><b></a>`,
			"bad SIMPLE_VIEW type":  `{"$":{".a":"NOT_A_TYPE"}}`,
			"bad SIMPLE_VIEW shape": `{"currentState":"UNLOCKED","model":[1]}`,
			"deep nesting":          strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000),
		} {
			format, conv := "JSON", "SAMPLE_DATA"
			if strings.Contains(name, "XML") {
				format = "XML"
			}
			if strings.Contains(name, "SIMPLE_VIEW") {
				conv = "SIMPLE_VIEW"
			}
			r := e.call("A", "POST", importPath(format, conv, "m", 1), []byte(body))
			r.problem(t, 400, "BAD_REQUEST")
		}
		// Over the 10 MiB limit: 400, not 413.
		big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), model.MaxBodyBytes)...)
		big = append(big, `"}`...)
		r := e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", "m", 1), big)
		r.problem(t, 400, "BAD_REQUEST")
		if !strings.Contains(string(r.body), "failed to read body") {
			t.Errorf("over-limit detail: %s", r.body)
		}
		// None of the failures created a model.
		if r := e.call("A", "GET", "/model/", nil); string(r.body) != "[]" {
			t.Fatalf("failed imports left models: %s", r.body)
		}
	})
}

func TestModelImportXML(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		x := `<root a="1"><name>Alice</name><age>30</age><tag>x</tag><tag>y</tag><flag>true</flag><p><q>1.5</q></p><t k="v">text</t></root>`
		if r := e.call("A", "POST", importPath("XML", "SAMPLE_DATA", "x", 1), []byte(x)); r.status != 200 {
			t.Fatalf("XML import: %d %s", r.status, r.body)
		}
		// The same document written as JSON by hand gives the same model.
		j := `{"a":1,"name":"Alice","age":30,"tag":["x","y"],"flag":true,"p":{"q":1.5},"t":{"k":"v","_text":"text"}}`
		e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", "j", 1), []byte(j))
		fromXML := e.call("A", "GET", "/model/export/SIMPLE_VIEW/x/1", nil).body
		fromJSON := e.call("A", "GET", "/model/export/SIMPLE_VIEW/j/1", nil).body
		if string(fromXML) != string(fromJSON) {
			t.Fatalf("XML %s\nJSON %s", fromXML, fromJSON)
		}
		for _, k := range []string{`".a":"INTEGER"`, `".age":"INTEGER"`, `".flag":"BOOLEAN"`, `".name":"STRING"`, `".p.q":"DOUBLE"`, `".t._text":"STRING"`, `".t.k":"STRING"`, `".tag[*]":"(STRING x 2)"`} {
			if !strings.Contains(string(fromXML), k) {
				t.Errorf("XML export lacks %s: %s", k, fromXML)
			}
		}
	})
}

func TestModelExport(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", "p", 1), []byte(`{"name":"x","age":3,"when":"2024-01-15","tags":["a"]}`))
		r := e.call("A", "GET", "/model/export/SIMPLE_VIEW/p/1", nil)
		var env map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &env); err != nil || len(env) != 2 || env["currentState"] == nil || env["model"] == nil {
			t.Fatalf("envelope must have exactly currentState and model: %s", r.body)
		}
		r = e.call("A", "GET", "/model/export/JSON_SCHEMA/p/1", nil)
		var js struct {
			CurrentState string `json:"currentState"`
			Model        struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"model"`
		}
		if err := json.Unmarshal(r.body, &js); err != nil || r.status != 200 || js.CurrentState != "UNLOCKED" || js.Model.Type != "object" ||
			!strings.Contains(string(js.Model.Properties["age"]), `"integer"`) || !strings.Contains(string(js.Model.Properties["tags"]), `"array"`) {
			t.Fatalf("JSON_SCHEMA export: %d %s", r.status, r.body)
		}
		props := e.call("A", "GET", "/model/export/simple_view/p/1", nil).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "converter" || props["invalidValue"] != "simple_view" {
			t.Errorf("converter props %v", props)
		}
		// 404 is checked before the converter.
		props = e.call("A", "GET", "/model/export/BOGUS/ghost/2", nil).problem(t, 404, "MODEL_NOT_FOUND")
		wantKeyProps(t, props, "ghost", 2)
		// Tenant B sees nothing of A's.
		e.call("B", "GET", "/model/export/SIMPLE_VIEW/p/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
		e.call("B", "GET", "/model/export/JSON_SCHEMA/p/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
		e.call("B", "POST", "/model/validate/p/1", []byte(`{}`)).problem(t, 404, "MODEL_NOT_FOUND")
		// B importing the same name makes B's own model; A's is untouched.
		e.call("B", "POST", importPath("JSON", "SAMPLE_DATA", "p", 1), []byte(`{"other":true}`))
		a := e.call("A", "GET", "/model/export/SIMPLE_VIEW/p/1", nil).body
		if strings.Contains(string(a), "other") {
			t.Fatalf("B's import merged into A's model: %s", a)
		}
	})
}

func TestModelValidate(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.call("A", "POST", importPath("JSON", "SAMPLE_DATA", "p", 1), []byte(`{"name":"x","age":3}`))
		check := func(body string, ok bool, msg string) {
			t.Helper()
			r := e.call("A", "POST", "/model/validate/p/1", []byte(body))
			var res model.ActionResult
			if err := json.Unmarshal(r.body, &res); err != nil || r.status != 200 {
				t.Fatalf("%s: %d %s", body, r.status, r.body)
			}
			if res.Success != ok || !strings.HasPrefix(res.Message, msg) || res.ModelID != model.ID(storage.ModelKey{Name: "p", Version: 1}) || res.ModelKey.Name != "p" {
				t.Errorf("%s: %+v", body, res)
			}
		}
		check(`{"name":"y","age":5}`, true, "Validation passed")
		check(`{"name":"y"}`, true, "Validation passed")
		check(`{"age":"old"}`, false, "Validation failed: ")
		check(`{"email":"e"}`, false, "Validation failed: ")
		// Strict rules hold in the locked state too, and nothing is widened.
		e.call("A", "POST", "/model/p/1/changeLevel/STRUCTURAL", nil)
		e.call("A", "PUT", "/model/p/1/lock", nil)
		check(`{"email":"e"}`, false, "Validation failed: ")
		if r := e.call("A", "GET", "/model/export/SIMPLE_VIEW/p/1", nil); strings.Contains(string(r.body), "email") {
			t.Fatal("validate widened the model")
		}
		r := e.call("A", "POST", "/model/validate/p/1", []byte(`{"age":"old","email":"x"}`))
		if want := `"message":"Validation failed: age: value of type STRING is not compatible with [INTEGER]; email: unexpected field not present in model"`; !strings.Contains(string(r.body), want) {
			t.Errorf("failure message: %s", r.body)
		}
		e.call("A", "POST", "/model/validate/p/1", []byte(`{"a":`)).problem(t, 400, "BAD_REQUEST")
		// Hostile input is a 400 naming the limit, not a failed validation.
		deep := strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300)
		if props := e.call("A", "POST", "/model/validate/p/1", []byte(deep)).problem(t, 400, "BAD_REQUEST"); props["limit"] != "MaxDepth" {
			t.Errorf("deep document props %v", props)
		}
		e.call("A", "POST", "/model/validate/ghost/1", []byte(`{"a":`)).problem(t, 404, "MODEL_NOT_FOUND")
	})
}
