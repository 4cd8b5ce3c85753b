package workflow

import (
	"log/slog"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// importBody wraps workflow JSON objects in an import request.
func importBody(mode string, workflows ...string) []byte {
	return []byte(`{"importMode":"` + mode + `","workflows":[` + strings.Join(workflows, ",") + `]}`)
}

// wfJSON is a valid two-state workflow with its states replaceable.
func wfJSON(name, states string) string {
	if states == "" {
		states = `{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":true}]},"DONE":{}}`
	}
	return `{"version":"1.3","name":"` + name + `","initialState":"NEW","states":` + states + `}`
}

func wantCode(t *testing.T, err error, code, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("got %T %v, want *apierr.Error %s", err, err, code)
	}
	if e.Code.String() != code {
		t.Fatalf("got code %s (%s), want %s", e.Code, e.Message, code)
	}
	if contains != "" && !strings.Contains(e.Message, contains) {
		t.Fatalf("message %q does not contain %q", e.Message, contains)
	}
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v       string
		ok      bool
		contain string
	}{
		{"1.3", true, ""}, {"1.1", true, ""}, {"1.2", true, ""},
		{"1.0", true, ""}, {"1.4", true, ""}, {"1.5", true, ""},
		{"", false, "missing"},
		{"1", false, "malformed"}, {"1.0.0", false, "malformed"}, {"01.1", false, "malformed"},
		{"1.01", false, "malformed"}, {"a.b", false, "malformed"}, {"1.", false, "malformed"}, {" 1.3", false, "malformed"},
		{"2.1", false, "major version 2"}, {"0.9", false, "major version 0"},
		{"1.6", false, "newer"}, {"1.10", false, "newer"},
	} {
		err := CheckVersion("w", tc.v)
		if tc.ok {
			if err != nil {
				t.Errorf("%q: %v", tc.v, err)
			}
			continue
		}
		t.Run(tc.v, func(t *testing.T) { wantCode(t, err, apierr.WorkflowSchemaVersionUnsupported.String(), tc.contain) })
	}
}

func TestParseImportGating(t *testing.T) {
	for _, tc := range []struct {
		name, body, code, contain string
	}{
		{"empty body", ``, apierr.BadRequest.String(), "empty"},
		{"not an object", `[1]`, apierr.BadRequest.String(), "invalid JSON"},
		// Unknown keys are ignored, known keys keep their types.
		{"known transition key of the wrong type", string(importBody("MERGE", wfJSON("w", `{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":"yes","zzz":1}]}}`))), apierr.BadRequest.String(), "invalid JSON"},
		{"known processor config key of the wrong type", string(importBody("MERGE", wfJSON("w", `{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":true,"processors":[{"name":"p","config":{"_calculationNodesTags":"x","responseTimeoutMs":"soon"}}]}]}}`))), apierr.BadRequest.String(), "invalid JSON"},
		{"known top-level key of the wrong type", `{"workflows":{},"x":1}`, apierr.BadRequest.String(), "invalid JSON"},
		{"trailing data", `{"workflows":[]} {}`, apierr.BadRequest.String(), "after the top-level value"},
		{"unknown importMode", `{"importMode":"UPSERT","workflows":[]}`, apierr.BadRequest.String(), "unknown importMode: UPSERT"},
		{"importMode checked before version", `{"importMode":"UPSERT","workflows":[{"version":"9.9","name":"w"}]}`, apierr.BadRequest.String(), "unknown importMode"},
		{"version 1 malformed", string(importBody("MERGE", strings.Replace(wfJSON("w", ""), `"1.3"`, `"1"`, 1))), apierr.WorkflowSchemaVersionUnsupported.String(), "malformed"},
		{"version 2.1", string(importBody("MERGE", strings.Replace(wfJSON("w", ""), `"1.3"`, `"2.1"`, 1))), apierr.WorkflowSchemaVersionUnsupported.String(), "major"},
		{"missing version", `{"workflows":[{"name":"w","initialState":"A","states":{"A":{}}}]}`, apierr.WorkflowSchemaVersionUnsupported.String(), "missing"},
		{"second workflow's version", string(importBody("MERGE", wfJSON("a", ""), strings.Replace(wfJSON("b", ""), `"1.3"`, `"1.9"`, 1))), apierr.WorkflowSchemaVersionUnsupported.String(), `workflow "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseImport([]byte(tc.body))
			wantCode(t, err, tc.code, tc.contain)
		})
	}

	t.Run("accepted", func(t *testing.T) {
		for body, mode := range map[string]string{
			`{"importMode":"replace","workflows":[` + wfJSON("w", "") + `]}`:                                ModeReplace,
			`{"importMode":"Activate","workflows":[` + wfJSON("w", "") + `]}`:                               ModeActivate,
			`{"workflows":[` + strings.Replace(wfJSON("w", ""), `"1.3"`, `"1.0"`, 1) + `]}`:                 ModeMerge,
			`{"importMode":"","workflows":[` + strings.Replace(wfJSON("w", ""), `"1.3"`, `"1.5"`, 1) + `]}`: ModeMerge,
			// Unknown keys at any level are accepted and ignored
			// (docs/decisions/0016-workflow-definitions.md).
			`{"workflows":[],"x":1}`: ModeMerge,
			`{"importMode":"MERGE","_meta":{"a":[1]},"workflows":[` + strings.Replace(wfJSON("w", `{"NEW":{"zz":1,"transitions":[{"name":"a","next":"NEW","manual":true,"zzz":1,"processors":[{"name":"p","yy":"q","config":{"_calculationNodesTags":"cloud_manager_app","nope":true}}]}]}}`), `"name":"w"`, `"name":"w","extra":null`, 1) + `]}`: ModeMerge,
			// Unknown members inside a criterion are the condition's business.
			`{"workflows":[` + wfJSON("w", `{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":true,"criterion":{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":1,"extra":{"q":1}}}]}}`) + `]}  ` + "\n": ModeMerge,
		} {
			req, err := ParseImport([]byte(body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if req.ImportMode != mode {
				t.Errorf("%s: mode %s, want %s", body, req.ImportMode, mode)
			}
		}
	})
}

func TestParseImportTooLarge(t *testing.T) {
	body := make([]byte, MaxImportBytes+1)
	for i := range body {
		body[i] = ' '
	}
	body[0] = '{'
	_, err := ParseImport(body)
	wantCode(t, err, apierr.BadRequest.String(), "larger than")
}

// importErr runs the whole import pipeline on a body against stored bytes.
func importErr(stored []byte, body []byte) (*ImportResult, error) {
	req, err := ParseImport(body)
	if err != nil {
		return nil, err
	}
	return Import(stored, req, nil)
}

func TestImportValidationMatrix(t *testing.T) {
	tr := func(s string) string { return wfJSON("w", `{"NEW":{"transitions":[`+s+`]},"DONE":{}}`) }
	proc := func(p string) string {
		return tr(`{"name":"GO","next":"DONE","manual":true,"processors":[` + p + `]}`)
	}
	long := strings.Repeat("x", MaxIdentifierLen+1)
	for _, tc := range []struct {
		name    string
		body    []byte
		contain string
	}{
		{"undeclared next", importBody("MERGE", tr(`{"name":"GO","next":"NOWHERE","manual":true}`)), `next state "NOWHERE" is not a declared state`},
		{"undeclared initialState", importBody("MERGE", `{"version":"1.3","name":"w","initialState":"X","states":{"A":{}}}`), `initialState "X"`},
		{"empty initialState", importBody("MERGE", `{"version":"1.3","name":"w","initialState":"","states":{"A":{}}}`), "initialState must not be empty"},
		{"empty workflow name", importBody("MERGE", wfJSON("", "")), "workflow name must not be empty"},
		{"duplicate workflow name", importBody("MERGE", wfJSON("w", ""), wfJSON("w", "")), `duplicate workflow name "w"`},
		{"long workflow name", importBody("MERGE", wfJSON(long, "")), "longer than 256"},
		{"empty state key", importBody("MERGE", `{"version":"1.3","name":"w","initialState":"A","states":{"A":{},"":{}}}`), "state name must not be empty"},
		{"duplicate transition name", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":true},{"name":"GO","next":"NEW","manual":true}`)), `duplicate transition name "GO"`},
		{"empty transition name", importBody("MERGE", tr(`{"name":"","next":"DONE","manual":true}`)), "transition name must not be empty"},
		{"empty processor name", importBody("MERGE", proc(`{"name":""}`)), "processor name must not be empty"},
		{"bad executionMode", importBody("MERGE", proc(`{"name":"p","executionMode":"LATER"}`)), `executionMode "LATER"`},
		{"bad retryPolicy", importBody("MERGE", proc(`{"name":"p","config":{"retryPolicy":"ALWAYS"}}`)), `retryPolicy "ALWAYS"`},
		{"asyncResult true", importBody("MERGE", proc(`{"name":"p","config":{"asyncResult":true}}`)), "asyncResult=true is not supported"},
		{"crossoverToAsyncMs", importBody("MERGE", proc(`{"name":"p","config":{"crossoverToAsyncMs":5}}`)), "crossoverToAsyncMs"},
		{"startNewTxOnDispatch with SYNC", importBody("MERGE", proc(`{"name":"p","executionMode":"SYNC","config":{"startNewTxOnDispatch":true}}`)), "startNewTxOnDispatch=true"},
		{"startNewTxOnDispatch beside config", importBody("MERGE", proc(`{"name":"p","startNewTxOnDispatch":true,"config":{}}`)), "startNewTxOnDispatch=true"},
		{"manual and schedule", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":true,"schedule":{"delayMs":10}}`)), "manual and scheduled are mutually exclusive"},
		{"delayMs 0", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":false,"schedule":{"delayMs":0}}`)), "exactly one of schedule.delayMs or schedule.function is required"},
		{"delayMs and function", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":false,"schedule":{"delayMs":5,"function":{"name":"f","resultKind":"Schedule","calculationNodesTags":"t"}}}`)), "exactly one of"},
		{"function resultKind", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":false,"schedule":{"function":{"name":"f","resultKind":"Other","calculationNodesTags":"t"}}}`)), "resultKind"},
		{"function without tags", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":false,"schedule":{"function":{"name":"f","resultKind":"Schedule","calculationNodesTags":""}}}`)), "calculationNodesTags"},
		{"negative timeoutMs", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":false,"schedule":{"delayMs":5,"timeoutMs":-1}}`)), "timeoutMs must be 0 or more"},
		{"annotation not an object", importBody("MERGE", strings.Replace(wfJSON("w", ""), `"initialState"`, `"annotations":[1],"initialState"`, 1)), "annotations must be a JSON object"},
		{"annotation too large", importBody("MERGE", strings.Replace(wfJSON("w", ""), `"initialState"`, `"annotations":{"a":"`+strings.Repeat("y", MaxAnnotationSize)+`"},"initialState"`, 1)), "larger than"},
		{"criterion not an object", importBody("MERGE", tr(`{"name":"GO","next":"DONE","manual":true,"criterion":"x"}`)), "criterion must be a condition object"},
		{"automated loop", importBody("MERGE", wfJSON("w", `{"A":{"transitions":[{"name":"ab","next":"B","manual":false}]},"B":{"transitions":[{"name":"ba","next":"A","manual":false}]},"NEW":{}}`)), "A -> B -> A"},
		{"scheduled edges count", importBody("MERGE", wfJSON("w", `{"NEW":{"transitions":[{"name":"s","next":"NEW","manual":false,"schedule":{"delayMs":5}}]}}`)), "NEW -> NEW"},
		{"empty REPLACE", importBody("REPLACE"), "REPLACE import needs at least one workflow"},
		{"empty ACTIVATE", importBody("ACTIVATE"), "ACTIVATE import needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := importErr(nil, tc.body)
			wantCode(t, err, apierr.ValidationFailed.String(), tc.contain)
		})
	}
}

func TestImportCycles(t *testing.T) {
	loop := wfJSON("loop", `{"NEW":{"transitions":[{"name":"a","next":"B","manual":false}]},"B":{"transitions":[{"name":"b","next":"NEW","manual":false}]}}`)
	body := []byte(`{"allowCycles":true,"workflows":[` + loop + `]}`)
	res, err := importErr(nil, body)
	if err != nil {
		t.Fatalf("allowCycles: %v", err)
	}
	if !res.CyclesAllowed {
		t.Error("CyclesAllowed not reported")
	}
	// Guarded, manual or disabled edges do not make a definite loop.
	for _, states := range []string{
		`{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":false,"criterion":{"type":"simple","jsonPath":"$.x","operatorType":"EQUALS","value":1}}]}}`,
		`{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":true}]}}`,
		`{"NEW":{"transitions":[{"name":"a","next":"NEW","manual":false,"disabled":true}]}}`,
	} {
		if _, err := importErr(nil, importBody("MERGE", wfJSON("w", states))); err != nil {
			t.Errorf("%s: %v", states, err)
		}
	}
	// The merged result is checked: a stored loop (imported with
	// allowCycles) fails a later MERGE that does not allow cycles.
	_, err = importErr(res.Stored, importBody("MERGE", wfJSON("other", "")))
	wantCode(t, err, apierr.ValidationFailed.String(), `workflow "loop"`)
	// REPLACE drops it, so the same import passes.
	if _, err := importErr(res.Stored, importBody("REPLACE", wfJSON("other", ""))); err != nil {
		t.Fatal(err)
	}
}

// storedNames decodes stored bytes into "name:active" pairs.
func storedNames(t *testing.T, stored []byte) []string {
	t.Helper()
	ws, err := Decode(stored)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		a := "on"
		if !w.IsActive() {
			a = "off"
		}
		out = append(out, w.Name+":"+w.InitialState+":"+a)
	}
	return out
}

func TestImportModes(t *testing.T) {
	mk := func(name, initial string, active string) string {
		a := ""
		if active != "" {
			a = `"active":` + active + `,`
		}
		return `{"version":"1.3","name":"` + name + `",` + a + `"initialState":"` + initial + `","states":{"` + initial + `":{}}}`
	}
	base, err := importErr(nil, importBody("REPLACE", mk("a", "A1", ""), mk("b", "B1", ""), mk("c", "C1", "false")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode string
		in   []string
		want string
	}{
		{"MERGE", []string{mk("b", "B2", ""), mk("d", "D1", "")}, "a:A1:on b:B2:on c:C1:off d:D1:on"},
		{"REPLACE", []string{mk("d", "D1", ""), mk("b", "B2", "")}, "d:D1:on b:B2:on"},
		{"ACTIVATE", []string{mk("b", "B2", "false"), mk("d", "D1", "")}, "a:A1:off c:C1:off b:B2:off d:D1:on"},
		{"merge", nil, "a:A1:on b:B1:on c:C1:off"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			res, err := importErr(base.Stored, importBody(tc.mode, tc.in...))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(storedNames(t, res.Stored), " "); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if tc.in == nil && res.Changed {
				t.Error("MERGE of nothing reported a change")
			}
		})
	}
}

func TestExport(t *testing.T) {
	_, err := Export(nil, "m", 3)
	wantCode(t, err, apierr.WorkflowNotFound.String(), "m version 3")

	states := `{"NEW":{"annotations":{ "k" : 1 },"transitions":[
	  {"name":"s0","next":"DONE","manual":false,"schedule":{"delayMs":5,"timeoutMs":0}},
	  {"name":"s1","next":"DONE","manual":false,"schedule":{"delayMs":5,"timeoutMs":250}},
	  {"name":"s2","next":"DONE","manual":false,"schedule":{"delayMs":5}},
	  {"name":"m","next":"DONE","manual":true,"disabled":false,"criterion":{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":1},
	   "processors":[{"name":"p","config":{"attachEntity":false}},{"name":"q","executionMode":"COMMIT_BEFORE_DISPATCH","startNewTxOnDispatch":true}]}]},
	  "DONE":{"transitions":[]}}`
	body := importBody("MERGE", strings.Replace(wfJSON("w", states), `"1.3"`, `"1.1"`, 1))
	res, err := importErr(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exportJSON(res.Stored, "m", 3)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		EntityName   string `json:"entityName"`
		ModelVersion int    `json:"modelVersion"`
		Workflows    []map[string]json.RawMessage
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.EntityName != "m" || doc.ModelVersion != 3 || len(doc.Workflows) != 1 {
		t.Fatalf("envelope: %s", out)
	}
	w := doc.Workflows[0]
	if string(w["version"]) != `"1.3"` {
		t.Errorf("version %s, want \"1.3\"", w["version"])
	}
	if _, ok := w["desc"]; ok {
		t.Error("empty desc exported")
	}
	if string(w["active"]) != "true" {
		t.Errorf("active %s, want true", w["active"])
	}
	s := string(w["states"])
	for _, want := range []string{
		`"DONE":{}`,
		`"annotations":{"k":1}`,
		`"schedule":{"delayMs":5,"timeoutMs":0}`,
		`"schedule":{"delayMs":5,"timeoutMs":250}`,
		`"schedule":{"delayMs":5}`,
		`"criterion":{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":1}`,
		`{"type":"","name":"p","config":{"attachEntity":false}}`,
		`{"type":"","name":"q","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"attachEntity":true,"startNewTxOnDispatch":true}}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("states lack %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, `"disabled"`) {
		t.Error("disabled:false exported")
	}
	// Export then re-import gives the same stored set.
	var again struct {
		Workflows json.RawMessage `json:"workflows"`
	}
	_ = json.Unmarshal(out, &again)
	res2, err := importErr(nil, []byte(`{"importMode":"REPLACE","workflows":`+string(again.Workflows)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	out2, _ := exportJSON(res2.Stored, "m", 3)
	if string(out2) != string(out) {
		t.Fatalf("re-import changed the export:\n%s\n%s", out, out2)
	}
}

func TestDefaultWorkflow(t *testing.T) {
	w := DefaultWorkflow()
	if w.Name != "default" || w.InitialState != "NONE" || !w.IsActive() {
		t.Fatalf("default workflow: %+v", w)
	}
	got := map[string]string{}
	for s, st := range w.States {
		for _, tr := range st.Transitions {
			got[s+"."+tr.Name] = tr.Next
			if (tr.Name == "NEW") == tr.Manual {
				t.Errorf("%s manual=%v", tr.Name, tr.Manual)
			}
		}
	}
	want := map[string]string{"NONE.NEW": "CREATED", "CREATED.UPDATE": "CREATED", "CREATED.DELETE": "DELETED"}
	if len(got) != len(want) {
		t.Fatalf("transitions %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s -> %s, want %s", k, got[k], v)
		}
	}
	set, _ := Compile(nil)
	if tr := set.Transitions("CREATED"); strings.Join(tr, ",") != "UPDATE,DELETE" {
		t.Errorf("transitions of CREATED: %v", tr)
	}
	if set.Transitions("DELETED") == nil || len(set.Transitions("DELETED")) != 0 {
		t.Error("DELETED should be a declared state without transitions")
	}
}

func TestImportLog(t *testing.T) {
	long := strings.Repeat("é", 250)
	res, err := importErr(nil, []byte(`{"importMode":"REPLACE","allowCycles":true,"workflows":[`+
		strings.Replace(wfJSON("w", ""), `"initialState"`, `"desc":"`+long+`","initialState"`, 1)+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	res.Log(slog.New(slog.NewJSONHandler(&buf, nil)), "entityName", "m")
	out := buf.String()
	if !strings.Contains(out, `"level":"WARN"`) || !strings.Contains(out, `"msg":"workflow import applied"`) ||
		!strings.Contains(out, `"workflowCount":1`) || !strings.Contains(out, strings.Repeat("é", 200)+`..."`) ||
		strings.Contains(out, strings.Repeat("é", 201)) {
		t.Fatalf("log:\n%s", out)
	}
	buf.Reset()
	(&ImportResult{}).Log(slog.New(slog.NewJSONHandler(&buf, nil)))
	if !strings.Contains(buf.String(), "zero workflows") {
		t.Fatalf("log: %s", buf.String())
	}
}

// exportJSON encodes Export's result as the HTTP adapter does.
func exportJSON(stored []byte, entityName string, modelVersion int) ([]byte, error) {
	res, err := Export(stored, entityName, modelVersion)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}
