package fast

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/model"
	"svc/storage"
)

// wfDef is a valid two-state workflow named name; extra is spliced into
// the workflow object (e.g. `"active":false,`).
func wfDef(name, extra string) string {
	return `{"version":"1.2",` + extra + `"name":"` + name + `","initialState":"NEW","states":{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":true}]},"DONE":{}}}`
}

func wfImport(mode string, defs ...string) []byte {
	return []byte(`{"importMode":"` + mode + `","workflows":[` + strings.Join(defs, ",") + `]}`)
}

type exported struct {
	EntityName   string `json:"entityName"`
	ModelVersion int    `json:"modelVersion"`
	Workflows    []struct {
		Version string `json:"version"`
		Name    string `json:"name"`
		Active  *bool  `json:"active"`
	} `json:"workflows"`
}

// exportNames exports tenant's workflows of name/1 and returns their
// names with "-" appended to inactive ones.
func (e *modelEnv) exportNames(t *testing.T, tenant, name string) []string {
	t.Helper()
	r := e.call(tenant, "GET", "/model/"+name+"/1/workflow/export", nil)
	if r.status != 200 || r.ctype != "application/json" {
		t.Fatalf("export: %d %s %s", r.status, r.ctype, r.body)
	}
	var got exported
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.EntityName != name || got.ModelVersion != 1 {
		t.Fatalf("export names %s/%d: %s", got.EntityName, got.ModelVersion, r.body)
	}
	var out []string
	for _, w := range got.Workflows {
		if w.Version != "1.3" {
			t.Errorf("exported version %q, want 1.3", w.Version)
		}
		n := w.Name
		if w.Active != nil && !*w.Active {
			n += "-"
		}
		out = append(out, n)
	}
	return out
}

func wantSuccess(t *testing.T, r apiResp) {
	t.Helper()
	if r.status != 200 || r.ctype != "application/json" || string(r.body) != `{"success":true}` {
		t.Fatalf("import: %d %s %s", r.status, r.ctype, r.body)
	}
}

func TestWorkflowImportExportModes(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "order", 1, model.Unlocked, personSchema) // import needs no lock
		imp := func(body []byte) apiResp { return e.call("A", "POST", "/model/order/1/workflow/import", body) }

		wantSuccess(t, imp(wfImport("", wfDef("a", ""), wfDef("b", ""))))
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "a,b" {
			t.Fatalf("after MERGE: %v", got)
		}
		// MERGE replaces b in place and appends c; lowercase mode accepted.
		wantSuccess(t, imp(wfImport("merge", wfDef("c", ""), wfDef("b", `"desc":"new b",`))))
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "a,b,c" {
			t.Fatalf("after second MERGE: %v", got)
		}
		r := e.call("A", "GET", "/model/order/1/workflow/export", nil)
		if !strings.Contains(string(r.body), `"desc":"new b"`) {
			t.Fatalf("MERGE did not replace b: %s", r.body)
		}
		// ACTIVATE keeps the others, deactivated, then appends the request.
		wantSuccess(t, imp(wfImport("ACTIVATE", wfDef("d", ""), wfDef("a", ""))))
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "b-,c-,d,a" {
			t.Fatalf("after ACTIVATE: %v", got)
		}
		// REPLACE keeps only the request.
		wantSuccess(t, imp(wfImport("replace", wfDef("z", ""))))
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "z" {
			t.Fatalf("after REPLACE: %v", got)
		}
		// A MERGE of nothing answers 200 and writes nothing.
		before, err := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "order", Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		wantSuccess(t, imp([]byte(`{"workflows":[]}`)))
		after, _ := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "order", Version: 1})
		if after.Revision != before.Revision || !bytes.Equal(after.Workflows, before.Workflows) {
			t.Fatalf("empty MERGE wrote the model: revision %d -> %d", before.Revision, after.Revision)
		}
		// The stored bytes are what export renders (model untouched otherwise).
		if after.State != model.Unlocked || string(after.Schema) != personSchema {
			t.Fatalf("import changed the model's other fields: %+v", after)
		}
	})
}

func TestWorkflowImportErrors(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "order", 1, model.Unlocked, personSchema)
		imp := func(path string, body []byte) apiResp { return e.call("A", "POST", path, body) }
		const p = "/model/order/1/workflow/import"

		// Schema version is checked before the model lookup.
		imp("/model/nope/1/workflow/import", wfImport("MERGE", `{"version":"2.1","name":"w"}`)).problem(t, 400, "WORKFLOW_SCHEMA_VERSION_UNSUPPORTED")
		imp(p, wfImport("MERGE", `{"version":"1","name":"w"}`)).problem(t, 400, "WORKFLOW_SCHEMA_VERSION_UNSUPPORTED")
		// Unknown model.
		props := imp("/model/nope/1/workflow/import", wfImport("MERGE", wfDef("w", ""))).problem(t, 404, "MODEL_NOT_FOUND")
		wantKeyProps(t, props, "nope", 1)
		// Even an empty MERGE needs the model.
		imp("/model/nope/1/workflow/import", []byte(`{"workflows":[]}`)).problem(t, 404, "MODEL_NOT_FOUND")
		// Path binding.
		props = imp("/model/order/x/workflow/import", wfImport("MERGE", wfDef("w", ""))).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "modelVersion" {
			t.Errorf("bad modelVersion properties: %v", props)
		}
		// Body gating: empty, invalid, known field of the wrong type,
		// duplicate key, trailing data, mode, size.
		for name, body := range map[string][]byte{
			"empty":         nil,
			"not JSON":      []byte(`{"workflows":`),
			"wrong type":    []byte(`{"workflows":[],"allowCycles":"yes","x":1}`),
			"duplicate key": []byte(`{"workflows":[],"x":1,"x":2}`),
			"trailing":      []byte(`{"workflows":[]} []`),
			"unknown mode":  []byte(`{"importMode":"UPSERT","workflows":[]}`),
			"over 10 MiB":   append(append([]byte(`{"workflows":[],"pad":"`), bytes.Repeat([]byte("x"), 10<<20)...), `"}`...),
		} {
			t.Run(name, func(t *testing.T) { imp(p, body).problem(t, 400, "BAD_REQUEST") })
		}
		// Validation: structure, criteria (through the predicate checker),
		// empty REPLACE, definite loops.
		for name, body := range map[string][]byte{
			"undeclared next":  wfImport("MERGE", `{"version":"1.3","name":"w","initialState":"NEW","states":{"NEW":{"transitions":[{"name":"GO","next":"NOWHERE","manual":true}]}}}`),
			"unknown operator": wfImport("MERGE", `{"version":"1.3","name":"w","initialState":"NEW","criterion":{"type":"simple","jsonPath":"$.a","operatorType":"ALMOST","value":1},"states":{"NEW":{}}}`),
			"bad regex":        wfImport("MERGE", `{"version":"1.3","name":"w","initialState":"NEW","states":{"NEW":{"transitions":[{"name":"GO","next":"NEW","manual":true,"criterion":{"type":"simple","jsonPath":"$.a","operatorType":"MATCHES_PATTERN","value":"("}}]}}}`),
			"empty REPLACE":    []byte(`{"importMode":"REPLACE","workflows":[]}`),
			"automated loop":   wfImport("MERGE", `{"version":"1.3","name":"w","initialState":"A","states":{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},"B":{"transitions":[{"name":"u","next":"A","manual":false}]}}}`),
		} {
			t.Run(name, func(t *testing.T) { imp(p, body).problem(t, 400, "VALIDATION_FAILED") })
		}
		// allowCycles accepts the loop.
		wantSuccess(t, imp(p, []byte(`{"allowCycles":true,"workflows":[{"version":"1.3","name":"w","initialState":"A","states":{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},"B":{"transitions":[{"name":"u","next":"A","manual":false}]}}}]}`)))
		// The loop check runs on the merged result: a later MERGE must
		// allow the stored loop again. A valid criterion passes the checker.
		v := `{"version":"1.3","name":"v","initialState":"NEW","criterion":{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.age","operatorType":"GREATER_THAN","value":3},{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":""}]},"states":{"NEW":{}}}`
		imp(p, wfImport("MERGE", v)).problem(t, 400, "VALIDATION_FAILED")
		wantSuccess(t, imp(p, []byte(`{"allowCycles":true,"workflows":[`+v+`]}`)))
		// Failed imports wrote nothing: exactly the two accepted workflows.
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "w,v" {
			t.Fatalf("stored after the failures: %v", got)
		}
	})
}

func TestWorkflowExportErrors(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		props := e.call("A", "GET", "/model/nope/1/workflow/export", nil).problem(t, 404, "MODEL_NOT_FOUND")
		wantKeyProps(t, props, "nope", 1)
		e.seed("A", "order", 1, model.Unlocked, personSchema)
		e.call("A", "GET", "/model/order/1/workflow/export", nil).problem(t, 404, "WORKFLOW_NOT_FOUND")
		e.call("A", "GET", "/model/order/v1/workflow/export", nil).problem(t, 400, "BAD_REQUEST")
		e.call("", "GET", "/model/order/1/workflow/export", nil).problem(t, 401, "UNAUTHORIZED")
		e.call("", "POST", "/model/order/1/workflow/import", wfImport("MERGE", wfDef("w", ""))).problem(t, 401, "UNAUTHORIZED")
	})
}

func TestWorkflowTenantIsolation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "order", 1, model.Unlocked, personSchema)
		wantSuccess(t, e.call("A", "POST", "/model/order/1/workflow/import", wfImport("MERGE", wfDef("mine", ""))))
		// B sees no model and cannot write A's.
		e.call("B", "GET", "/model/order/1/workflow/export", nil).problem(t, 404, "MODEL_NOT_FOUND")
		e.call("B", "POST", "/model/order/1/workflow/import", wfImport("REPLACE", wfDef("theirs", ""))).problem(t, 404, "MODEL_NOT_FOUND")
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "mine" {
			t.Fatalf("A's workflows after B's import: %v", got)
		}
		// B's model of the same name has its own workflows.
		e.seed("B", "order", 1, model.Unlocked, personSchema)
		e.call("B", "GET", "/model/order/1/workflow/export", nil).problem(t, 404, "WORKFLOW_NOT_FOUND")
		wantSuccess(t, e.call("B", "POST", "/model/order/1/workflow/import", wfImport("REPLACE", wfDef("theirs", ""))))
		if got := e.exportNames(t, "B", "order"); strings.Join(got, ",") != "theirs" {
			t.Fatalf("B's workflows: %v", got)
		}
		if got := e.exportNames(t, "A", "order"); strings.Join(got, ",") != "mine" {
			t.Fatalf("B's import changed A's workflows: %v", got)
		}
	})
}

func TestWorkflowAreaIs501WithoutModelService(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	if r := do(s, "GET", "/api/model/a/1/workflow/export"); r.StatusCode() != 501 {
		t.Errorf("export without a model service: %d", r.StatusCode())
	}
	if r := do(s, "POST", "/api/model/a/1/workflow/import"); r.StatusCode() != 501 {
		t.Errorf("import without a model service: %d", r.StatusCode())
	}
}

// TestWorkflowImportIgnoresUnknownKeys imports a workflow file as real ones
// are written, with keys svc does not know at every level (a processor
// config's "_calculationNodesTags" among them): it is accepted, the known
// keys take effect and export renders only what svc knows
// (docs/decisions/0016-workflow-definitions.md).
func TestWorkflowImportIgnoresUnknownKeys(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "order", 1, model.Unlocked, personSchema)
		body := []byte(`{"importMode":"MERGE","source":"studio","workflows":[{"version":"1.3","name":"w","layout":{"x":1},"initialState":"NEW",` +
			`"states":{"NEW":{"color":"red","transitions":[{"name":"GO","next":"DONE","manual":true,"ui":[1,2],` +
			`"processors":[{"type":"externalized","name":"p","origin":"x","config":{"_calculationNodesTags":"cloud_manager_app","calculationNodesTags":"tag1","responseTimeoutMs":5000}}]}]},"DONE":{}}}]}`)
		wantSuccess(t, e.call("A", "POST", "/model/order/1/workflow/import", body))
		r := e.call("A", "GET", "/model/order/1/workflow/export", nil)
		if r.status != 200 {
			t.Fatalf("export: %d %s", r.status, r.body)
		}
		for _, unknown := range []string{"_calculationNodesTags", "source", "layout", "color", `"ui"`, "origin"} {
			if bytes.Contains(r.body, []byte(unknown)) {
				t.Errorf("export carries the ignored key %s: %s", unknown, r.body)
			}
		}
		for _, known := range []string{`"calculationNodesTags":"tag1"`, `"responseTimeoutMs":5000`} {
			if !bytes.Contains(r.body, []byte(known)) {
				t.Errorf("export lost %s: %s", known, r.body)
			}
		}
	})
}
