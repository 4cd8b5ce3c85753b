package fast

import (
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/audit"
	"svc/entity"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage/memory"
	"svc/workflow"
)

// newAuditEnv is an entity environment whose server also serves the audit
// API over the same engine.
func newAuditEnv(t testing.TB, engine string) *entityEnv {
	t.Helper()
	ms, es, as, sr := testStores(t, engine)
	msvc := model.New(ms, nil)
	// The engine as serve.go wires it: models without imported workflows
	// take the no-workflow path.
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)),
		entity.WithConditions(search.New(ms, sr, memory.NewSearchJobs(), search.Options{})))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Audit: audit.New(as, es)})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc}
}

type auditItem struct {
	AuditEventType string          `json:"auditEventType"`
	ChangeType     string          `json:"changeType"`
	EventType      string          `json:"eventType"`
	Severity       string          `json:"severity"`
	UTCTime        string          `json:"utcTime"`
	MicrosTime     int64           `json:"microsTime"`
	System         *bool           `json:"system"`
	EntityID       string          `json:"entityId"`
	TransactionID  string          `json:"transactionId"`
	State          *string         `json:"state"`
	Details        *string         `json:"details"`
	Data           json.RawMessage `json:"data"`
	Actor          *struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		LegalID string `json:"legalId"`
	} `json:"actor"`
}

type auditPage struct {
	Items      []auditItem `json:"items"`
	Pagination struct {
		HasNext    *bool   `json:"hasNext"`
		NextCursor *string `json:"nextCursor"`
	} `json:"pagination"`
}

func (it auditItem) kind() string {
	if it.AuditEventType == "EntityChange" {
		return it.ChangeType
	}
	return it.EventType
}

func kinds(p auditPage) string {
	var s []string
	for _, it := range p.Items {
		s = append(s, it.kind())
	}
	return strings.Join(s, " ")
}

// TestAuditAPI runs the audit API over real HTTP on every engine.
func TestAuditAPI(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newAuditEnv(t, engine)
			t.Run("trail", func(t *testing.T) { auditTrail(t, env) })
			t.Run("parameters", func(t *testing.T) { auditParameters(t, env) })
			t.Run("tenant isolation", func(t *testing.T) { auditTenants(t, env) })
			t.Run("collections and bulk delete", func(t *testing.T) { auditCollections(t, env) })
			t.Run("workflow engine events", func(t *testing.T) { auditEngine(t, env) })
			t.Run("delete by condition", func(t *testing.T) { auditDeleteWhere(t, env) })
		})
	}
}

func auditTrail(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "audited", 1, `{"n":1}`)
	id, tx1 := env.create("A", "audited", 1, `{"n":1}`)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"n":2}`)).ok(t).decode(t, &r)
	tx2 := r.TransactionID
	env.call("A", "PUT", "/entity/JSON/"+id+"/UPDATE", []byte(`{"n":3}`)).ok(t).decode(t, &r)
	tx3 := r.TransactionID

	var p auditPage
	env.call("A", "GET", "/audit/entity/"+id, nil).ok(t).decode(t, &p)
	want := "UPDATE STATE_MACHINE_FINISH STATE_MACHINE_START UPDATE STATE_MACHINE_FINISH STATE_MACHINE_START CREATE STATE_MACHINE_FINISH STATE_MACHINE_START"
	if got := kinds(p); got != want {
		t.Fatalf("trail:\n got %s\nwant %s", got, want)
	}
	if *p.Pagination.HasNext || p.Pagination.NextCursor != nil {
		t.Fatalf("pagination %+v", p.Pagination)
	}
	prev := time.Time{}
	for i, it := range p.Items {
		at, err := time.Parse(time.RFC3339Nano, it.UTCTime)
		if err != nil || it.MicrosTime != at.UnixMicro() || it.Severity != "INFO" || it.EntityID != id {
			t.Fatalf("item %d: %+v (%v)", i, it, err)
		}
		if i > 0 && at.After(prev) {
			t.Fatalf("item %d at %v is newer than the one before (%v)", i, at, prev)
		}
		prev = at
		switch it.AuditEventType {
		case "EntityChange":
			if it.Actor == nil || it.Actor.ID != "u-A" || it.Actor.Name != "u-A" || it.Actor.LegalID != "A" ||
				it.System == nil || *it.System || it.State != nil || it.EventType != "" {
				t.Fatalf("EntityChange %d: %+v", i, it)
			}
		case "StateMachine":
			if it.Actor != nil || it.System != nil || it.State == nil || *it.State != "CREATED" || it.Details == nil || it.ChangeType != "" {
				t.Fatalf("StateMachine %d: %+v", i, it)
			}
		default:
			t.Fatalf("kind %q", it.AuditEventType)
		}
	}
	if p.Items[0].TransactionID != tx3 || p.Items[3].TransactionID != tx2 || p.Items[6].TransactionID != tx1 {
		t.Fatalf("transaction ids %s %s %s", p.Items[0].TransactionID, p.Items[3].TransactionID, p.Items[6].TransactionID)
	}
	if *p.Items[2].Details != "Manual transition started" || *p.Items[5].Details != "Loopback started" || *p.Items[8].Details != "State machine started" {
		t.Fatalf("start details %q %q %q", *p.Items[2].Details, *p.Items[5].Details, *p.Items[8].Details)
	}
	if string(p.Items[2].Data) != "null" {
		t.Fatalf("START data %s", p.Items[2].Data)
	}

	// The finished event of the create.
	var fin auditItem
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/"+tx1+"/finished", nil).ok(t).decode(t, &fin)
	var data struct{ Success bool }
	if fin.EventType != "STATE_MACHINE_FINISH" || fin.TransactionID != tx1 || *fin.State != "CREATED" ||
		json.Unmarshal(fin.Data, &data) != nil || !data.Success {
		t.Fatalf("finished %+v data %s", fin, fin.Data)
	}
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/0c5b2a4e-0000-1000-8000-000000000000/finished", nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/nope/finished", nil).problem(t, 400, "BAD_REQUEST")

	// A deleted entity keeps its trail, and its DELETE event carries the
	// entity, transaction and tenant.
	var del struct {
		TransactionID string `json:"transactionId"`
	}
	env.call("A", "DELETE", "/entity/"+id, nil).ok(t).decode(t, &del)
	env.call("A", "GET", "/audit/entity/"+id+"?limit=1", nil).ok(t).decode(t, &p)
	it := p.Items[0]
	if it.ChangeType != "DELETE" || it.EntityID != id || it.TransactionID != del.TransactionID || it.Actor.LegalID != "A" {
		t.Fatalf("DELETE event %+v", it)
	}
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/"+del.TransactionID+"/finished", nil).problem(t, 404, "ENTITY_NOT_FOUND")
}

func auditParameters(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "paged", 1, `{"n":1}`)
	id, tx1 := env.create("A", "paged", 1, `{"n":1}`)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"n":2}`)).ok(t)
	get := func(q string) auditPage {
		t.Helper()
		var p auditPage
		env.call("A", "GET", "/audit/entity/"+id+q, nil).ok(t).decode(t, &p)
		return p
	}
	if got := kinds(get("?eventType=EntityChange")); got != "UPDATE CREATE" {
		t.Errorf("EntityChange only: %s", got)
	}
	if got := kinds(get("?eventType=StateMachine&eventType=EntityChange")); len(strings.Fields(got)) != 6 {
		t.Errorf("both kinds: %s", got)
	}
	for _, q := range []string{"?eventType=System", "?eventType=Bogus", "?eventType=EntityChange,StateMachine", "?severity=ERROR", "?severity=nonsense"} {
		if p := get(q); p.Items == nil || len(p.Items) != 0 || *p.Pagination.HasNext {
			t.Errorf("%s: %s", q, kinds(p))
		}
	}
	if got := kinds(get("?severity=INFO&transactionId=" + tx1)); got != "CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" {
		t.Errorf("by transaction: %s", got)
	}
	all := get("")
	created, _ := time.Parse(time.RFC3339Nano, all.Items[5].UTCTime)
	updated, _ := time.Parse(time.RFC3339Nano, all.Items[0].UTCTime)
	from := url.QueryEscape(updated.Format(time.RFC3339Nano))
	if got := kinds(get("?fromUtcTime=" + from)); got != "UPDATE STATE_MACHINE_FINISH STATE_MACHINE_START" {
		t.Errorf("from the update (inclusive): %s", got)
	}
	if got := kinds(get("?toUtcTime=" + from)); got != "CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" {
		t.Errorf("to the update (exclusive): %s", got)
	}
	// An offset-less time is UTC.
	noZone := url.QueryEscape(created.Format("2006-01-02T15:04:05.999999999"))
	if got := kinds(get("?fromUtcTime=" + noZone)); len(strings.Fields(got)) != 6 {
		t.Errorf("from the create without a zone: %s", got)
	}

	// Paging: an offset cursor, nextCursor only while hasNext.
	p := get("?limit=3")
	if len(p.Items) != 3 || !*p.Pagination.HasNext || p.Pagination.NextCursor == nil || *p.Pagination.NextCursor != "3" {
		t.Fatalf("page 1: %s %+v", kinds(p), p.Pagination)
	}
	p2 := get("?limit=3&cursor=3")
	if kinds(p2) != "CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" || *p2.Pagination.HasNext || p2.Pagination.NextCursor != nil {
		t.Fatalf("page 2: %s %+v", kinds(p2), p2.Pagination)
	}
	if got := kinds(get("?limit=3&cursor=garbage")); got != kinds(p) {
		t.Errorf("an invalid cursor starts over: %s", got)
	}
	if got := get("?limit=5000"); len(got.Items) != 6 {
		t.Errorf("clamped limit: %d items", len(got.Items))
	}
	for _, q := range []string{"?limit=0", "?limit=-1", "?limit=x"} {
		props := env.call("A", "GET", "/audit/entity/"+id+q, nil).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "limit" {
			t.Errorf("%s: properties %v", q, props)
		}
	}
	for _, param := range []string{"fromUtcTime", "toUtcTime", "transactionId"} {
		props := env.call("A", "GET", "/audit/entity/"+id+"?"+param+"=yesterday", nil).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != param {
			t.Errorf("%s: properties %v", param, props)
		}
	}
	env.call("A", "GET", "/audit/entity/not-a-uuid", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/audit/entity/0c5b2a4e-0000-1000-8000-000000000000", nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/audit/entity/0c5b2a4e-0000-1000-8000-000000000000?severity=WARN", nil).problem(t, 404, "ENTITY_NOT_FOUND")
}

func auditTenants(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "secret", 1, `{"n":1}`)
	id, tx := env.create("A", "secret", 1, `{"n":1}`)
	env.call("A", "GET", "/audit/entity/"+id, nil).ok(t)
	env.call("B", "GET", "/audit/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("B", "GET", "/audit/entity/"+id+"?eventType=EntityChange", nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("B", "GET", "/audit/entity/"+id+"/workflow/"+tx+"/finished", nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/"+tx+"/finished", nil).ok(t)
}

// auditCollections: every entity of a chunked array create, a collection
// update and a delete by model gets its events, in its own transaction.
func auditCollections(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "many", 1, `{"n":1}`)
	var res []txResult
	env.call("A", "POST", "/entity/JSON/many/1?transactionWindow=2", []byte(`[{"n":1},{"n":2},{"n":3}]`)).ok(t).decode(t, &res)
	if len(res) != 2 {
		t.Fatalf("chunks %+v", res)
	}
	trail := func(id string) auditPage {
		t.Helper()
		var p auditPage
		env.call("A", "GET", "/audit/entity/"+id, nil).ok(t).decode(t, &p)
		return p
	}
	for _, r := range res {
		for _, id := range r.EntityIDs {
			p := trail(id)
			if kinds(p) != "CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" || p.Items[0].TransactionID != r.TransactionID {
				t.Fatalf("%s: %s", id, kinds(p))
			}
		}
	}
	a, b := res[0].EntityIDs[0], res[0].EntityIDs[1]
	body, _ := json.Marshal([]map[string]any{
		{"id": a, "payload": `{"n":10}`, "transition": "UPDATE"},
		{"id": b, "payload": `{"n":20}`, "ifMatch": "0c5b2a4e-0000-1000-8000-000000000000"},
	})
	var up []txResult
	env.call("A", "PUT", "/entity/JSON", body).ok(t).decode(t, &up)
	if len(up) != 1 || len(up[0].Failed) != 1 {
		t.Fatalf("collection update %+v", up)
	}
	if p := trail(a); kinds(p) != "UPDATE STATE_MACHINE_FINISH STATE_MACHINE_START CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" ||
		p.Items[0].TransactionID != up[0].TransactionID || *p.Items[2].Details != "Manual transition started" {
		t.Fatalf("updated item: %s", kinds(p))
	}
	// The stale item keeps its audit pairing (docs/decisions/0015-transactions.md): its start and
	// TRANSITION_ABORTED commit with the chunk.
	if p := trail(b); kinds(p) != "TRANSITION_ABORTED STATE_MACHINE_START CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" ||
		p.Items[0].TransactionID != up[0].TransactionID {
		t.Fatalf("isolated stale item's events: %s", kinds(p))
	}
	env.call("A", "DELETE", "/entity/many/1", nil).ok(t)
	for _, r := range res {
		for _, id := range r.EntityIDs {
			p := trail(id)
			if p.Items[0].ChangeType != "DELETE" || p.Items[0].Actor.LegalID != "A" || p.Items[0].Actor.ID != "u-A" {
				t.Fatalf("%s after delete by model: %s", id, kinds(p))
			}
		}
	}
}

// auditEngine: a write that ran an imported workflow records the engine's
// own events (selection, the automated transition its criterion allowed, a
// criterion that did not match) in its transaction, not the synthetic
// START/FINISH pair.
func auditEngine(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "flowed", 1, `{"n":1}`)
	wf := `{"version":"1.3","name":"flow","initialState":"NEW","states":{` +
		`"NEW":{"transitions":[{"name":"settle","next":"SMALL","manual":false,"criterion":{"type":"simple","jsonPath":"$.n","operatorType":"LESS_OR_EQUAL","value":5}},` +
		`{"name":"promote","next":"BIG","manual":false,"criterion":{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_THAN","value":5}}]},` +
		`"BIG":{},"SMALL":{"transitions":[{"name":"grow","next":"BIG","manual":true}]}}}`
	r := env.call("A", "POST", "/model/flowed/1/workflow/import", []byte(`{"importMode":"REPLACE","workflows":[`+wf+`]}`))
	if r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	id, tx1 := env.create("A", "flowed", 1, `{"n":9}`)

	var p auditPage
	env.call("A", "GET", "/audit/entity/"+id, nil).ok(t).decode(t, &p)
	got := kinds(p)
	// Newest first: the change, then the engine's run backwards.
	want := "CREATE STATE_MACHINE_FINISH TRANSITION_MAKE TRANSITION_NOT_MATCH_CRITERION WORKFLOW_FOUND STATE_MACHINE_START"
	if got != want {
		t.Fatalf("engine trail:\n got %s\nwant %s", got, want)
	}
	for i, it := range p.Items {
		if it.TransactionID != tx1 || it.EntityID != id {
			t.Fatalf("item %d: %+v, want transaction %s", i, it, tx1)
		}
		if it.AuditEventType == "StateMachine" && (it.Actor != nil || it.State == nil || it.Details == nil) {
			t.Fatalf("StateMachine %d: %+v", i, it)
		}
	}
	if *p.Items[1].State != "BIG" {
		t.Fatalf("FINISH state %q", *p.Items[1].State)
	}
	var fin auditItem
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/"+tx1+"/finished", nil).ok(t).decode(t, &fin)
	if fin.EventType != "STATE_MACHINE_FINISH" || *fin.State != "BIG" {
		t.Fatalf("finished %+v", fin)
	}

	// A named transition on an engine-run entity: its TRANSITION_MAKE.
	id2, _ := env.create("A", "flowed", 1, `{"n":1}`)
	var res txResult
	env.call("A", "PUT", "/entity/JSON/"+id2+"/grow", []byte(`{"n":2}`)).ok(t).decode(t, &res)
	env.call("A", "GET", "/audit/entity/"+id2+"?transactionId="+res.TransactionID, nil).ok(t).decode(t, &p)
	got = kinds(p)
	if want := "UPDATE STATE_MACHINE_FINISH TRANSITION_MAKE STATE_MACHINE_START"; got != want {
		t.Fatalf("transition trail:\n got %s\nwant %s", got, want)
	}
	for _, it := range p.Items {
		if it.EventType == "STATE_MACHINE_START" && *it.Details == "Manual transition started" {
			t.Fatalf("the synthetic START was recorded: %+v", it)
		}
	}
}

// auditDeleteWhere: each entity a conditional delete removes records its
// DELETE in the request's one transaction; the others record nothing.
func auditDeleteWhere(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "culled", 1, `{"n":1}`)
	gone1, _ := env.create("A", "culled", 1, `{"n":7}`)
	gone2, _ := env.create("A", "culled", 1, `{"n":8}`)
	kept, _ := env.create("A", "culled", 1, `{"n":1}`)
	env.call("A", "DELETE", "/entity/culled/1", []byte(`{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_THAN","value":5}`)).ok(t)
	var p auditPage
	var tx string
	for _, id := range []string{gone1, gone2} {
		env.call("A", "GET", "/audit/entity/"+id+"?limit=1", nil).ok(t).decode(t, &p)
		it := p.Items[0]
		if it.ChangeType != "DELETE" || it.EntityID != id || it.Actor == nil || it.Actor.LegalID != "A" || (tx != "" && it.TransactionID != tx) {
			t.Fatalf("DELETE of %s: %+v (first transaction %s)", id, it, tx)
		}
		tx = it.TransactionID
	}
	env.call("A", "GET", "/audit/entity/"+kept, nil).ok(t).decode(t, &p)
	if got := kinds(p); got != "CREATE STATE_MACHINE_FINISH STATE_MACHINE_START" {
		t.Fatalf("kept entity's trail: %s", got)
	}
}
