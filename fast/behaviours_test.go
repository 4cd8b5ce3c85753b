package fast

// Acceptance tests for the 30 entity, workflow and compute-member behaviours
// clients rely on most (the rules are in docs/decisions/0014-entities.md to
// docs/decisions/0019-compute-members.md), over real
// HTTP on loopback with the workflow engine wired as serve.go wires it and
// compute members joined over loopback gRPC (behaviours_env_test.go).
// Every behaviour runs on the memory engine and on PostgreSQL, except 29
// (member keep-alive), which touches no storage and runs on memory with
// short configured intervals.
//
// Where svc decided differently from the compatible system, the test asserts
// svc's rule:
//   - 17: workflow version "1.0" is accepted (read as 1.1); "1" and "2.1"
//     are refused.
//   - 18: retryPolicy aliases (EXPONENTIAL, ...) are accepted; an unknown
//     policy is refused.
//   - 21: audit events are written in the transaction of the change, so a
//     create aborted by the visit limit leaves neither the entity nor its
//     CANCEL event; the CANCEL is asserted on an update, where the entity
//     exists, through the error alone (its transaction rolls back too).
//   - 24: a join without "id" is accepted (client templates).
//
// "extra_predicates" covers the section's "also worth a quick test" list.
//
// Behaviour 30 (scheduled transitions) needs a running scheduler and is
// TestScheduledTransitionsHTTP (scheduled_test.go), on both engines.
//
// Other tests that cover the same behaviours in more depth:
//
//	| #  | behaviour                   | also covered by                                              |
//	|----|-----------------------------|--------------------------------------------------------------|
//	|  1 | default workflow            | TestEntityAPI/*/lifecycle, workflow.TestDefaultWorkflowLifecycle |
//	|  2 | create preconditions        | TestEntityAPI/*/preconditions                                |
//	|  3 | chunking                    | TestEntityAPI/*/chunks_and_partial_failure                   |
//	|  4 | collection create payload   | TestEntityAPI/*/collections                                  |
//	|  5 | partial chunk failure       | TestEntityAPI/*/chunks_and_partial_failure, collections      |
//	|  6 | GET by pointInTime          | TestEntityAPI/*/lifecycle                                    |
//	|  7 | GET by transactionId        | TestEntityAPI/*/lifecycle                                    |
//	|  8 | list pagination             | TestEntityAPI/*/chunks_and_partial_failure                   |
//	| 11 | If-Match on PUT             | TestEntityAPI/*/lifecycle, concurrent_writers                |
//	| 12 | PATCH                       | TestEntityAPI/*/lifecycle                                    |
//	| 13 | collection PUT isolation    | TestEntityAPI/*/collections                                  |
//	| 14 | delete single               | TestEntityAPI/*/lifecycle                                    |
//	| 15 | delete by model             | TestEntityAPI/*/delete_by_condition                          |
//	| 17 | import gating               | TestWorkflowImportErrors, workflow.TestParseImportGating     |
//	| 18 | import validation matrix    | workflow.TestImportValidationMatrix, TestImportCycles        |
//	| 19 | import modes                | TestWorkflowImportExportModes, workflow.TestImportModes      |
//	| 20 | cascade                     | TestAuditAPI/*/workflow_engine_events, workflow.TestCascade  |
//	| 21 | visit limit                 | workflow.TestVisitAndDepthLimits                             |
//	| 22 | manual transition errors    | workflow.TestManualTransitionErrors                          |
//	| 23 | workflow selection          | workflow.TestWorkflowSelection                               |
//	| 24 | member join                 | compute.TestJoinRules, compute.TestJoinGreet                 |
//	| 25 | SYNC processor              | compute.TestSyncProcessorAndCriteriaOverGRPC, TestRequestWireShape |
//	| 26 | failure modes               | compute.TestProcessorFailureModesOverGRPC, TestMemberLossDuringCall |
//	| 27 | ASYNC_NEW_TX                | workflow.TestAsyncNewTx (savepoint rollback, WARN)           |
//	| 28 | function criterion          | workflow.TestFunctionCriteria                                |
//	| 29 | keep-alive                  | compute.TestKeepAliveAndEviction, cmd/svc TestServeKeepAliveVariables |
//
// COMMIT_BEFORE_DISPATCH (docs/decisions/0017-workflow-engine.md) is covered by TestCommitBeforeDispatch.

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute"
)

type behaviour struct {
	name string
	fn   func(t *testing.T, env *behavEnv)
}

var behaviours = []behaviour{
	{"01_default_workflow", b01DefaultWorkflow},
	{"02_create_preconditions", b02CreatePreconditions},
	{"03_chunking", b03Chunking},
	{"04_collection_create_payload", b04CollectionCreate},
	{"05_partial_chunk_failure", b05PartialChunkFailure},
	{"06_get_by_point_in_time", b06PointInTime},
	{"07_get_by_transaction_id", b07TransactionID},
	{"08_list_pagination", b08Pagination},
	{"09_full_replacement", b09FullReplacement},
	{"10_unchanged_payload", b10UnchangedPayload},
	{"11_if_match_on_put", b11IfMatch},
	{"12_patch", b12Patch},
	{"13_collection_put_isolation", b13CollectionPut},
	{"14_delete_single", b14DeleteSingle},
	{"15_delete_by_model", b15DeleteByModel},
	{"16_changes", b16Changes},
	{"17_workflow_import_gating", b17ImportGating},
	{"18_import_validation_matrix", b18ValidationMatrix},
	{"19_import_modes", b19ImportModes},
	{"20_cascade", b20Cascade},
	{"21_visit_limit", b21VisitLimit},
	{"22_manual_transition_errors", b22ManualErrors},
	{"23_workflow_selection", b23Selection},
	{"24_member_join", b24MemberJoin},
	{"25_sync_processor", b25SyncProcessor},
	{"26_failure_modes", b26FailureModes},
	{"27_async_new_tx", b27AsyncNewTx},
	{"28_function_criterion", b28FunctionCriterion},
	{"extra_predicates", bExtraPredicates},
}

// TestBehaviours runs every behaviour on every engine; one environment per
// engine serves them all, each behaviour on models of its own.
func TestBehaviours(t *testing.T) {
	t.Parallel()
	envs := map[string]*behavEnv{}
	for _, engine := range entityEngines {
		envs[engine] = newBehavEnv(t, engine, compute.Config{})
	}
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) {
			for _, engine := range entityEngines {
				t.Run(engine, func(t *testing.T) { b.fn(t, envs[engine].with(t)) })
			}
		})
	}
	t.Run("29_keep_alive", b29KeepAlive)
}

// at formats an instant for a pointInTime query.
func at(tm time.Time) string { return url.QueryEscape(tm.UTC().Format(time.RFC3339Nano)) }

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm
}

type changeEntry struct {
	ChangeType    string  `json:"changeType"`
	TimeOfChange  string  `json:"timeOfChange"`
	TransactionID *string `json:"transactionId"`
}

func (e *behavEnv) changes(id, query string) []changeEntry {
	e.t.Helper()
	var cs []changeEntry
	e.call("A", "GET", "/entity/"+id+"/changes"+query, nil).ok(e.t).decode(e.t, &cs)
	return cs
}

func b01DefaultWorkflow(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b01", 1, `{"a":1}`)
	var res []txResult
	env.call("A", "POST", "/entity/JSON/b01/1", []byte(`{"a":1}`)).ok(t).decode(t, &res)
	if len(res) != 1 || res[0].TransactionID == "" || len(res[0].EntityIDs) != 1 {
		t.Fatalf("create answer %+v", res)
	}
	e := env.get("A", "/entity/"+res[0].EntityIDs[0])
	if e.Meta.State != "CREATED" || e.Meta.Transition == nil || *e.Meta.Transition != "loopback" || e.Meta.TransactionID != res[0].TransactionID {
		t.Fatalf("entity %+v", e.Meta)
	}
	var names []string
	env.call("A", "GET", "/entity/"+e.Meta.ID+"/transitions", nil).ok(t).decode(t, &names)
	if fmt.Sprint(names) != "[UPDATE DELETE]" {
		t.Fatalf("transitions %v", names)
	}
}

func b02CreatePreconditions(t *testing.T, env *behavEnv) {
	env.call("A", "POST", "/model/import/JSON/SAMPLE_DATA/b02/1", []byte(`{"a":1}`)).ok(t)
	env.call("A", "POST", "/entity/JSON/b02/1", []byte(`{"a":1}`)).problem(t, 409, "MODEL_NOT_LOCKED")
	env.call("A", "POST", "/entity/JSON/b02-unknown/1", []byte(`{"a":1}`)).problem(t, 404, "MODEL_NOT_FOUND")
	if n := env.count("A", "b02", 1); n != 0 {
		t.Fatalf("%d entities after refused creates", n)
	}
}

func docs(n int) []byte {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func b03Chunking(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b03", 1, `{"n":1}`)
	var res []txResult
	env.call("A", "POST", "/entity/JSON/b03/1?transactionWindow=100", docs(500)).ok(t).decode(t, &res)
	seen := map[string]bool{}
	for _, r := range res {
		if len(r.EntityIDs) != 100 || seen[r.TransactionID] || r.TransactionID == "" {
			t.Fatalf("chunk %+v", r)
		}
		seen[r.TransactionID] = true
	}
	if len(res) != 5 {
		t.Fatalf("%d chunks, want 5", len(res))
	}
	env.call("A", "POST", "/entity/JSON/b03/1?transactionWindow=1000", docs(500)).ok(t).decode(t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 500 {
		t.Fatalf("window 1000: %d chunks", len(res))
	}
	env.call("A", "POST", "/entity/JSON/b03/1?transactionWindow=0", docs(1)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", "/entity/JSON/b03/1?transactionWindow=1001", docs(1)).problem(t, 400, "BAD_REQUEST")
	if n := env.count("A", "b03", 1); n != 1000 {
		t.Fatalf("count %d, want 1000", n)
	}
}

func collectionItem(model, payload string) map[string]any {
	return map[string]any{"model": map[string]any{"name": model, "version": 1}, "payload": payload}
}

func b04CollectionCreate(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b04a", 1, `{"a":1}`)
	env.lockedModel("A", "b04b", 1, `{"b":"x"}`)
	env.call("A", "POST", "/entity/JSON", []byte(`[{"model":{"name":"b04a","version":1},"payload":{"a":1}}]`)).problem(t, 400, "BAD_REQUEST")
	body, _ := json.Marshal([]any{collectionItem("b04a", `{"a":2}`), collectionItem("b04b", `{"b":"y"}`), collectionItem("b04a", `{"a":3}`)})
	var res []txResult
	env.call("A", "POST", "/entity/JSON", body).ok(t).decode(t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 3 {
		t.Fatalf("collection create %+v", res)
	}
	for i, want := range []string{"b04a", "b04b", "b04a"} {
		e := env.get("A", "/entity/"+res[0].EntityIDs[i])
		if e.Meta.ModelKey.Name != want || e.Meta.TransactionID != res[0].TransactionID {
			t.Fatalf("item %d: %+v", i, e.Meta)
		}
	}
}

func b05PartialChunkFailure(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b05", 1, `{"a":1}`)
	bad, _ := json.Marshal([]any{collectionItem("b05-nope", `{"a":1}`), collectionItem("b05", `{"a":2}`)})
	env.call("A", "POST", "/entity/JSON?transactionWindow=1", bad).problem(t, 404, "MODEL_NOT_FOUND")
	if n := env.count("A", "b05", 1); n != 0 {
		t.Fatalf("a failed first chunk left %d entities", n)
	}
	later, _ := json.Marshal([]any{collectionItem("b05", `{"a":1}`), collectionItem("b05", `{"a":2}`),
		collectionItem("b05-nope", `{"a":3}`), collectionItem("b05", `{"a":4}`), collectionItem("b05", `{"a":5}`)})
	var res []txResult
	env.call("A", "POST", "/entity/JSON?transactionWindow=2", later).ok(t).decode(t, &res)
	if len(res) != 2 || len(res[0].EntityIDs) != 2 || res[1].Error == nil || res[1].Error.ChunkIndex != 1 ||
		res[1].Error.Code != "MODEL_NOT_FOUND" || !strings.HasPrefix(res[1].Error.Message, "MODEL_NOT_FOUND: ") {
		t.Fatalf("partial failure %+v", res)
	}
	for i, id := range res[0].EntityIDs {
		if e := env.get("A", "/entity/"+id); string(e.Data) != fmt.Sprintf(`{"a":%d}`, i+1) {
			t.Fatalf("durable entity %d: %s", i, e.Data)
		}
	}
	if n := env.count("A", "b05", 1); n != 2 {
		t.Fatalf("count %d after the partial failure, want 2", n)
	}
}

func b06PointInTime(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b06", 1, `{"v":1}`)
	id, _ := env.create("A", "b06", 1, `{"v":1}`)
	v1 := env.get("A", "/entity/"+id)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":2}`)).ok(t)
	v2 := env.get("A", "/entity/"+id)
	t0 := parseTime(t, v1.Meta.CreationDate).Add(-time.Millisecond)
	t1 := parseTime(t, v1.Meta.LastUpdateTime)
	t2 := parseTime(t, v2.Meta.LastUpdateTime)
	env.call("A", "GET", "/entity/"+id+"?pointInTime="+at(t0), nil).problem(t, 404, "ENTITY_NOT_FOUND")
	if e := env.get("A", "/entity/"+id+"?pointInTime="+at(t1)); string(e.Data) != `{"v":1}` {
		t.Fatalf("at t1: %s", e.Data)
	}
	if e := env.get("A", "/entity/"+id+"?pointInTime="+at(t2)); string(e.Data) != `{"v":2}` {
		t.Fatalf("at t2: %s", e.Data)
	}
	if string(v2.Data) != `{"v":2}` {
		t.Fatalf("latest %s", v2.Data)
	}
	env.call("A", "GET", "/entity/"+id+"?pointInTime="+at(t1)+"&transactionId="+v1.Meta.TransactionID, nil).problem(t, 400, "BAD_REQUEST")
}

func b07TransactionID(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b07", 1, `{"v":1}`)
	id, tx1 := env.create("A", "b07", 1, `{"v":1}`)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":2}`)).ok(t).decode(t, &r)
	if e := env.get("A", "/entity/"+id+"?transactionId="+tx1); string(e.Data) != `{"v":1}` || e.Meta.TransactionID != tx1 {
		t.Fatalf("by create transaction: %+v %s", e.Meta, e.Data)
	}
	if e := env.get("A", "/entity/"+id+"?transactionId="+r.TransactionID); string(e.Data) != `{"v":2}` {
		t.Fatalf("by update transaction: %s", e.Data)
	}
	env.call("A", "GET", "/entity/"+id+"?transactionId=5f0c6a9e-8f5c-11f0-8000-000000000001", nil).problem(t, 404, "ENTITY_NOT_FOUND")
}

func b08Pagination(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b08", 1, `{"n":1}`)
	var res []txResult
	env.call("A", "POST", "/entity/JSON/b08/1", docs(25)).ok(t).decode(t, &res)
	ids := append([]string(nil), res[0].EntityIDs...)
	sort.Strings(ids)
	var page []envelope
	env.call("A", "GET", "/entity/b08/1", nil).ok(t).decode(t, &page)
	if len(page) != 20 {
		t.Fatalf("default page size gave %d", len(page))
	}
	for i, e := range page {
		if e.Meta.ID != ids[i] {
			t.Fatalf("default page item %d is %s, want %s (id order)", i, e.Meta.ID, ids[i])
		}
	}
	env.call("A", "GET", "/entity/b08/1?pageNumber=1", nil).ok(t).decode(t, &page)
	if len(page) != 5 || page[0].Meta.ID != ids[20] {
		t.Fatalf("second page %d items", len(page))
	}
	env.call("A", "GET", "/entity/b08/1?pageNumber=-1", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/b08/1?pageSize=10001", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/b08-nope/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
}

func b09FullReplacement(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b09", 1, `{"tags":["a","b","c"],"inner":{"x":1,"y":2},"keep":"k"}`)
	id, _ := env.create("A", "b09", 1, `{"tags":["a","b","c"],"inner":{"x":1,"y":2},"keep":"k"}`)
	for _, doc := range []string{`{"tags":["a"],"inner":{"x":1},"keep":"k"}`, `{"tags":[],"keep":"z"}`} {
		env.call("A", "PUT", "/entity/JSON/"+id, []byte(doc)).ok(t)
		if e := env.get("A", "/entity/"+id); string(e.Data) != doc {
			t.Fatalf("after PUT %s: %s", doc, e.Data)
		}
	}
}

func b10UnchangedPayload(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b10", 1, `{"v":1}`)
	id, tx1 := env.create("A", "b10", 1, `{"v":1}`)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id+"/UPDATE", []byte(`{"v":1}`)).ok(t).decode(t, &r)
	if r.TransactionID == "" || r.TransactionID == tx1 {
		t.Fatalf("same payload: transaction %q", r.TransactionID)
	}
	cs := env.changes(id, "")
	if len(cs) != 2 || cs[0].ChangeType != "UPDATE" || *cs[0].TransactionID != r.TransactionID {
		t.Fatalf("changes %+v", cs)
	}
	if e := env.get("A", "/entity/"+id); *e.Meta.Transition != "UPDATE" || e.Meta.TransactionID != r.TransactionID {
		t.Fatalf("entity %+v", e.Meta)
	}
}

func b11IfMatch(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b11", 1, `{"v":1}`)
	id, tx1 := env.create("A", "b11", 1, `{"v":1}`)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":2}`), "If-Match", tx1).ok(t).decode(t, &r)
	props := env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":3}`), "If-Match", tx1).problem(t, 412, "ENTITY_MODIFIED")
	if props["entityId"] != id || props["retryable"] != false {
		t.Fatalf("412 properties %v", props)
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"v":2}` {
		t.Fatalf("a stale PUT wrote: %s", e.Data)
	}
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":3}`), "If-Match", `"`+r.TransactionID+`"`).ok(t)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":4}`)).ok(t)
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"v":4}` {
		t.Fatalf("unconditional PUT: %s", e.Data)
	}
}

func b12Patch(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b12", 1, `{"a":1,"b":"x"}`)
	id, tx1 := env.create("A", "b12", 1, `{"a":1,"b":"x"}`)
	const mp = "application/merge-patch+json"
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"a":2}`), "Content-Type", mp).problem(t, 428, "PRECONDITION_REQUIRED")
	env.call("A", "PATCH", "/entity/XML/"+id, []byte(`{"a":2}`), "Content-Type", mp, "If-Match", "*").problem(t, 415, "UNSUPPORTED_MEDIA_TYPE")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"a":2}`), "Content-Type", "application/json", "If-Match", "*").problem(t, 415, "UNSUPPORTED_MEDIA_TYPE")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`[]`), "Content-Type", "application/json-patch+json", "If-Match", "*").problem(t, 501, "NOT_IMPLEMENTED")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"b":null}`), "Content-Type", mp, "If-Match", "*").ok(t)
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"a":1}` {
		t.Fatalf("null did not delete: %s", e.Data)
	}
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"a":3}`), "Content-Type", mp, "If-Match", tx1).problem(t, 412, "ENTITY_MODIFIED")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"unknown":true}`), "Content-Type", mp, "If-Match", "*").problem(t, 400, "BAD_REQUEST")
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"a":1}` {
		t.Fatalf("a refused patch wrote: %s", e.Data)
	}
}

func b13CollectionPut(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b13", 1, `{"v":1}`)
	a, txA := env.create("A", "b13", 1, `{"v":1}`)
	b, _ := env.create("A", "b13", 1, `{"v":1}`)
	c, _ := env.create("A", "b13", 1, `{"v":1}`)
	body, _ := json.Marshal([]map[string]string{
		{"id": a, "payload": `{"v":2}`, "ifMatch": txA},
		{"id": b, "payload": `{"v":2}`, "ifMatch": "5f0c6a9e-8f5c-11f0-8000-000000000001"},
		{"id": c, "payload": `{"v":2}`, "transition": "UPDATE"},
	})
	var res []txResult
	env.call("A", "PUT", "/entity/JSON", body).ok(t).decode(t, &res)
	if len(res) != 1 || fmt.Sprint(res[0].EntityIDs) != fmt.Sprint([]string{a, c}) || len(res[0].Failed) != 1 ||
		res[0].Failed[0].EntityID != b || res[0].Failed[0].Error.Code != "ENTITY_MODIFIED" || res[0].Failed[0].Error.ItemIndex != 1 {
		t.Fatalf("isolation %+v", res)
	}
	// The isolated item's refusal is on its trail, in the chunk's
	// transaction (docs/decisions/0015-transactions.md: the audit pairing is kept).
	bTx := env.get("A", "/entity/"+b).Meta.TransactionID
	items := env.trail("A", b, "&transactionId="+res[0].TransactionID)
	if got := trailKinds(items); got != "STATE_MACHINE_START TRANSITION_ABORTED" {
		t.Fatalf("isolated item's trail in the chunk: %q", got)
	}
	var ab map[string]string
	if err := json.Unmarshal(items[1].Data, &ab); err != nil || ab["reason"] != "ENTITY_MODIFIED" || ab["transitionName"] != "loopback" ||
		ab["expectedTxId"] != "5f0c6a9e-8f5c-11f0-8000-000000000001" || ab["actualTxId"] != bTx {
		t.Fatalf("TRANSITION_ABORTED data %s (%v)", items[1].Data, err)
	}
	for id, want := range map[string]string{a: `{"v":2}`, b: `{"v":1}`, c: `{"v":2}`} {
		if e := env.get("A", "/entity/"+id); string(e.Data) != want {
			t.Fatalf("%s: %s, want %s", id, e.Data, want)
		}
	}
	// Every item stale: the chunk still commits, writing nothing but the
	// refusal.
	body, _ = json.Marshal([]map[string]string{{"id": b, "payload": `{"v":5}`, "ifMatch": txA}})
	env.call("A", "PUT", "/entity/JSON", body).ok(t).decode(t, &res)
	if len(res) != 1 || res[0].TransactionID == "" || len(res[0].EntityIDs) != 0 || len(res[0].Failed) != 1 {
		t.Fatalf("all-stale chunk %+v", res)
	}
	if got := trailKinds(env.trail("A", b, "&transactionId="+res[0].TransactionID)); got != "STATE_MACHINE_START TRANSITION_ABORTED" {
		t.Fatalf("all-stale chunk's trail %q", got)
	}
	body, _ = json.Marshal([]map[string]string{
		{"id": a, "payload": `{"v":3}`},
		{"id": "5f0c6a9e-8f5c-11f0-8000-000000000001", "payload": `{"v":3}`},
	})
	env.call("A", "PUT", "/entity/JSON", body).problem(t, 404, "ENTITY_NOT_FOUND")
	if e := env.get("A", "/entity/"+a); string(e.Data) != `{"v":2}` {
		t.Fatalf("a rolled back chunk wrote: %s", e.Data)
	}
}

func b14DeleteSingle(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b14", 1, `{"v":1}`)
	id, _ := env.create("A", "b14", 1, `{"v":1}`)
	created := parseTime(t, env.get("A", "/entity/"+id).Meta.CreationDate)
	var del map[string]any
	env.call("A", "DELETE", "/entity/"+id, nil).ok(t).decode(t, &del)
	mk, _ := del["modelKey"].(map[string]any)
	if del["id"] != id || mk["name"] != "b14" || mk["version"] != float64(1) || del["transactionId"] == "" || len(del) != 3 {
		t.Fatalf("delete answer %v", del)
	}
	env.call("A", "GET", "/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	if e := env.get("A", "/entity/"+id+"?pointInTime="+at(created)); string(e.Data) != `{"v":1}` {
		t.Fatalf("before the delete: %s", e.Data)
	}
	cs := env.changes(id, "")
	if len(cs) != 2 || cs[0].ChangeType != "DELETE" || cs[0].TransactionID != nil {
		t.Fatalf("changes %+v", cs)
	}
	env.call("A", "DELETE", "/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
}

func b15DeleteByModel(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b15", 1, `{"n":1}`)
	env.call("A", "POST", "/entity/JSON/b15/1", docs(6)).ok(t)
	type result struct {
		DeleteResult struct {
			Matched int `json:"numberOfEntitites"`
			Removed int `json:"numberOfEntititesRemoved"`
		} `json:"deleteResult"`
		IDs *[]string `json:"ids"`
	}
	var r result
	cond := `{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_OR_EQUAL","value":4}`
	env.call("A", "DELETE", "/entity/b15/1?verbose=true", []byte(cond)).ok(t).decode(t, &r)
	if r.DeleteResult.Matched != 2 || r.DeleteResult.Removed != 2 || r.IDs == nil || len(*r.IDs) != 2 {
		t.Fatalf("conditional delete %+v", r)
	}
	for _, id := range *r.IDs {
		env.call("A", "GET", "/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	}
	env.call("A", "DELETE", "/entity/b15/1", []byte(`{"type":"simple","jsonPath":`)).problem(t, 400, "INVALID_CONDITION")
	r = result{}
	env.call("A", "DELETE", "/entity/b15/1?verbose=true", nil).ok(t).decode(t, &r)
	if r.DeleteResult.Matched != 4 || r.DeleteResult.Removed != 4 || r.IDs == nil || len(*r.IDs) != 0 {
		t.Fatalf("delete all %+v", r)
	}
	if n := env.count("A", "b15", 1); n != 0 {
		t.Fatalf("count %d", n)
	}
}

func b16Changes(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b16", 1, `{"v":1}`)
	id, _ := env.create("A", "b16", 1, `{"v":1}`)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":2}`)).ok(t)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"v":3}`)).ok(t)
	cs := env.changes(id, "")
	if len(cs) != 3 || cs[0].ChangeType != "UPDATE" || cs[2].ChangeType != "CREATE" {
		t.Fatalf("changes %+v", cs)
	}
	for i := 1; i < len(cs); i++ {
		if !parseTime(t, cs[i-1].TimeOfChange).After(parseTime(t, cs[i].TimeOfChange)) {
			t.Fatalf("not newest first: %+v", cs)
		}
	}
	for i, want := range []int{3, 2, 1} {
		if n := len(env.changes(id, "?pointInTime="+at(parseTime(t, cs[i].TimeOfChange)))); n != want {
			t.Fatalf("as at change %d: %d entries, want %d", i, n, want)
		}
	}
	env.call("A", "GET", "/entity/5f0c6a9e-8f5c-11f0-8000-000000000001/changes", nil).problem(t, 404, "ENTITY_NOT_FOUND")
}
