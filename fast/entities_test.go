package fast

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
)

// TestEntityAPI runs the entity and stats API over real HTTP on every
// engine, one database per engine.
func TestEntityAPI(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newEntityEnv(t, engine)
			t.Run("lifecycle", func(t *testing.T) { entityLifecycle(t, env) })
			t.Run("chunks and partial failure", func(t *testing.T) { entityChunks(t, env) })
			t.Run("collections", func(t *testing.T) { entityCollections(t, env) })
			t.Run("preconditions", func(t *testing.T) { entityPreconditions(t, env) })
			t.Run("tenant isolation", func(t *testing.T) { entityTenantIsolation(t, env) })
			t.Run("stats", func(t *testing.T) { entityStats(t, env) })
			t.Run("concurrent writers", func(t *testing.T) { entityConcurrentWriters(t, env) })
			t.Run("delete by condition", func(t *testing.T) { entityDeleteWhere(t, env) })
		})
	}
}

const prizeSample = `{"year":2020,"category":"physics","laureates":[{"name":"A","share":1}],"note":"x"}`

func entityLifecycle(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "prize", 1, prizeSample)
	doc := `{"year":2021,"category":"chemistry","laureates":[{"name":"B","share":2}],"note":"first"}`
	id, tx1 := env.create("A", "prize", 1, doc)

	e := env.get("A", "/entity/"+id)
	if e.Type != "ENTITY" || string(e.Data) != doc || e.Meta.ID != id || e.Meta.ModelKey.Name != "prize" ||
		e.Meta.ModelKey.Version != float64(1) || e.Meta.State != "CREATED" || e.Meta.TransactionID != tx1 ||
		e.Meta.Transition == nil || *e.Meta.Transition != "loopback" || e.Meta.PointInTime != nil {
		t.Fatalf("envelope after create: %+v data %s", e.Meta, e.Data)
	}
	if e.Meta.CreationDate != e.Meta.LastUpdateTime {
		t.Errorf("creationDate %s != lastUpdateTime %s on a new entity", e.Meta.CreationDate, e.Meta.LastUpdateTime)
	}
	created, err := time.Parse(time.RFC3339Nano, e.Meta.CreationDate)
	if err != nil || !strings.HasSuffix(e.Meta.CreationDate, "Z") {
		t.Fatalf("creationDate %q: %v", e.Meta.CreationDate, err)
	}

	// PUT with a stale If-Match is 412 and changes nothing; with the right
	// one it replaces the document.
	upd := `{"year":2021,"category":"chemistry","laureates":[],"note":"second"}`
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(upd), "If-Match", "0c5b2a4e-0000-1000-8000-000000000000").
		problem(t, 412, "ENTITY_MODIFIED")
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(upd), "If-Match", tx1).ok(t).decode(t, &r)
	if len(r.EntityIDs) != 1 || r.EntityIDs[0] != id || r.TransactionID == tx1 {
		t.Fatalf("update answer %s", env.call("A", "GET", "/entity/"+id, nil).body)
	}
	tx2 := r.TransactionID
	e = env.get("A", "/entity/"+id)
	if string(e.Data) != upd || e.Meta.TransactionID != tx2 || e.Meta.CreationDate == e.Meta.LastUpdateTime {
		t.Fatalf("after update: %+v %s", e.Meta, e.Data)
	}
	// Reads as at the creation instant and by the first transaction see v1.
	if old := env.get("A", "/entity/"+id+"?pointInTime="+url.QueryEscape(created.Format(time.RFC3339Nano))); string(old.Data) != doc {
		t.Errorf("as at creation: %s", old.Data)
	}
	if old := env.get("A", "/entity/"+id+"?transactionId="+tx1); string(old.Data) != doc || old.Meta.TransactionID != tx1 {
		t.Errorf("by first transaction: %s", old.Data)
	}
	before := created.Add(-time.Millisecond).Format(time.RFC3339Nano)
	env.call("A", "GET", "/entity/"+id+"?pointInTime="+url.QueryEscape(before), nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/entity/"+id+"?transactionId=0c5b2a4e-0000-1000-8000-000000000000", nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/entity/"+id+"?transactionId="+tx1+"&pointInTime="+url.QueryEscape(before), nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/not-a-uuid", nil).problem(t, 400, "BAD_REQUEST")

	// A field of the wrong type is refused by the model.
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"year":"MMXXI"}`)).problem(t, 400, "INCOMPATIBLE_TYPE")

	// Merge patch: preconditions first, then the merge onto stored data.
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"note":"p"}`), "Content-Type", "application/merge-patch+json").
		problem(t, 428, "PRECONDITION_REQUIRED")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"note":"p"}`), "Content-Type", "application/json", "If-Match", "*").
		problem(t, 415, "UNSUPPORTED_MEDIA_TYPE")
	env.call("A", "PATCH", "/entity/XML/"+id, []byte(`{"note":"p"}`), "Content-Type", "application/merge-patch+json", "If-Match", "*").
		problem(t, 415, "UNSUPPORTED_MEDIA_TYPE")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`[]`), "Content-Type", "application/json-patch+json", "If-Match", "*").
		problem(t, 501, "NOT_IMPLEMENTED")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"note":"p"}`), "Content-Type", "application/merge-patch+json", "If-Match", tx1).
		problem(t, 412, "ENTITY_MODIFIED")
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"note":"patched","laureates":null}`),
		"Content-Type", "application/merge-patch+json; charset=utf-8", "If-Match", tx2).ok(t)
	e = env.get("A", "/entity/"+id)
	if string(e.Data) != `{"year":2021,"category":"chemistry","note":"patched"}` {
		t.Errorf("merged document %s", e.Data)
	}
	// A patch adding an unknown field is validated strictly.
	env.call("A", "PATCH", "/entity/JSON/"+id, []byte(`{"brandNew":1}`), "Content-Type", "application/merge-patch+json", "If-Match", "*").
		problem(t, 400, "BAD_REQUEST")

	// Transitions of the default workflow.
	var names []string
	env.call("A", "GET", "/entity/"+id+"/transitions", nil).ok(t).decode(t, &names)
	if fmt.Sprint(names) != "[UPDATE DELETE]" {
		t.Errorf("transitions %v", names)
	}
	env.call("A", "GET", "/platform-api/entity/fetch/transitions?entityClass=prize.1&entityId="+id, nil).ok(t).decode(t, &names)
	if fmt.Sprint(names) != "[UPDATE DELETE]" {
		t.Errorf("platform transitions %v", names)
	}
	env.call("A", "PUT", "/entity/JSON/"+id+"/NOPE", []byte(upd)).problem(t, 400, "TRANSITION_NOT_FOUND")
	env.call("A", "PUT", "/entity/JSON/"+id+"/DELETE", []byte(upd)).ok(t)
	e = env.get("A", "/entity/"+id)
	if e.Meta.State != "DELETED" || *e.Meta.Transition != "DELETE" {
		t.Errorf("after DELETE transition: %+v", e.Meta)
	}
	env.call("A", "GET", "/entity/"+id+"/transitions", nil).ok(t).decode(t, &names)
	if len(names) != 0 {
		t.Errorf("terminal state transitions %v", names)
	}
	env.call("A", "GET", "/entity/"+id+"/transitions?transactionId="+tx1, nil).ok(t).decode(t, &names)
	if fmt.Sprint(names) != "[UPDATE DELETE]" {
		t.Errorf("transitions as of the first transaction %v", names)
	}

	// Changes: newest first; the first two checkpoints truncate.
	type change struct {
		ChangeType    string  `json:"changeType"`
		TimeOfChange  string  `json:"timeOfChange"`
		User          string  `json:"user"`
		TransactionID *string `json:"transactionId"`
	}
	var cs []change
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &cs)
	if len(cs) != 4 || cs[0].ChangeType != "UPDATE" || cs[3].ChangeType != "CREATE" || cs[3].User != "u-A" || *cs[3].TransactionID != tx1 {
		t.Fatalf("changes %+v", cs)
	}
	env.call("A", "GET", "/entity/"+id+"/changes?pointInTime="+url.QueryEscape(cs[2].TimeOfChange), nil).ok(t).decode(t, &cs)
	if len(cs) != 2 {
		t.Errorf("changes as at the second change: %d", len(cs))
	}

	// Delete: 200 with the model key, then 404; history keeps a DELETE.
	var del struct {
		ID       string `json:"id"`
		ModelKey struct {
			Name    string `json:"name"`
			Version int    `json:"version"`
		} `json:"modelKey"`
		TransactionID string `json:"transactionId"`
	}
	env.call("A", "DELETE", "/entity/"+id, nil).ok(t).decode(t, &del)
	if del.ID != id || del.ModelKey.Name != "prize" || del.ModelKey.Version != 1 || del.TransactionID == "" {
		t.Errorf("delete answer %+v", del)
	}
	props := env.call("A", "GET", "/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	if props["entityId"] != id {
		t.Errorf("404 properties %v", props)
	}
	env.call("A", "DELETE", "/entity/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	cs = nil
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &cs)
	if cs[0].ChangeType != "DELETE" || cs[0].TransactionID != nil {
		t.Errorf("delete change %+v", cs[0])
	}
	// The model cannot be unlocked or deleted while... it has no entities now.
	env.call("A", "PUT", "/model/prize/1/unlock", nil).ok(t)
}

func entityChunks(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "item", 1, `{"n":1,"s":"x"}`)
	var docs []string
	for i := 0; i < 250; i++ {
		docs = append(docs, fmt.Sprintf(`{"n":%d,"s":"v%d"}`, i, i))
	}
	var res []txResult
	env.call("A", "POST", "/entity/JSON/item/1?transactionWindow=100", []byte("["+strings.Join(docs, ",")+"]")).ok(t).decode(t, &res)
	if len(res) != 3 || len(res[0].EntityIDs) != 100 || len(res[2].EntityIDs) != 50 || res[0].TransactionID == res[1].TransactionID {
		t.Fatalf("chunks: %d", len(res))
	}
	// Every entity of a chunk carries the chunk's transaction.
	e := env.get("A", "/entity/"+res[1].EntityIDs[7])
	if e.Meta.TransactionID != res[1].TransactionID || string(e.Data) != docs[107] {
		t.Errorf("entity 107: %+v %s", e.Meta, e.Data)
	}
	// Paging is in id order and covers every entity once.
	var all []string
	for _, r := range res {
		all = append(all, r.EntityIDs...)
	}
	sort.Strings(all)
	var paged []string
	for page := 0; ; page++ {
		var list []envelope
		env.call("A", "GET", fmt.Sprintf("/entity/item/1?pageSize=60&pageNumber=%d", page), nil).ok(t).decode(t, &list)
		if len(list) == 0 {
			break
		}
		for _, e := range list {
			paged = append(paged, e.Meta.ID)
		}
	}
	if fmt.Sprint(paged) != fmt.Sprint(all) {
		t.Errorf("paged %d ids, want %d in order", len(paged), len(all))
	}
	env.call("A", "GET", "/entity/item/1?pageSize=-1", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/item/1?pageSize=10001", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/item/1?pageNumber=214749", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/entity/nope/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
	var page []envelope
	at := time.Now().UTC().Format(time.RFC3339Nano)
	env.call("A", "GET", "/entity/item/1?pageSize=1&pointInTime="+url.QueryEscape(at), nil).ok(t).decode(t, &page)
	if len(page) != 1 || page[0].Meta.PointInTime == nil {
		t.Errorf("list as at: %+v", page)
	}

	// Window bounds are checked before the body.
	env.call("A", "POST", "/entity/JSON/item/1?transactionWindow=0", []byte(`not json`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", "/entity/JSON/item/1?transactionWindow=1001", []byte(`not json`)).problem(t, 400, "BAD_REQUEST")

	// A bad element in the second chunk: the first chunk is durable, the
	// answer is 200 with a trailing error, later chunks are not attempted.
	bad := []string{`{"n":1}`, `{"n":2}`, `{"n":"three"}`, `{"n":4}`, `{"n":5}`}
	env.call("A", "POST", "/entity/JSON/item/1?transactionWindow=2", []byte("["+strings.Join(bad, ",")+"]")).ok(t).decode(t, &res)
	if len(res) != 2 || len(res[0].EntityIDs) != 2 || res[1].Error == nil || res[1].Error.ChunkIndex != 1 ||
		res[1].Error.Code != "INCOMPATIBLE_TYPE" || !strings.HasPrefix(res[1].Error.Message, "INCOMPATIBLE_TYPE: ") || len(res[1].EntityIDs) != 0 {
		t.Fatalf("partial failure answer: %+v", res)
	}
	if n := env.count("A", "item", 1); n != 252 {
		t.Errorf("count after partial failure %d, want 252", n)
	}
	// A bad first chunk is the request's error; nothing is durable.
	env.call("A", "POST", "/entity/JSON/item/1?transactionWindow=10", []byte("["+strings.Join(bad, ",")+"]")).problem(t, 400, "INCOMPATIBLE_TYPE")
	if n := env.count("A", "item", 1); n != 252 {
		t.Errorf("count after failed first chunk %d", n)
	}
	env.call("A", "POST", "/entity/JSON/item/1", []byte(`[]`)).ok(t).decode(t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 0 || res[0].TransactionID == "" {
		t.Errorf("empty array: %+v", res)
	}
	env.call("A", "POST", "/entity/JSON/item/1", []byte(`{"n":`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", "/entity/YAML/item/1", []byte(`{"n":1}`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", "/entity/XML/item/1", []byte(`<item><n>7</n><s>xml</s></item>`)).ok(t).decode(t, &res)
	if e := env.get("A", "/entity/"+res[0].EntityIDs[0]); !strings.Contains(string(e.Data), `"xml"`) {
		t.Errorf("XML entity stored as %s", e.Data)
	}

	// Delete by model: one transaction, counts, verbose ids.
	var dr struct {
		ModelID string `json:"entityModelClassId"`
		Result  struct {
			Matched int `json:"numberOfEntitites"`
			Removed int `json:"numberOfEntititesRemoved"`
		} `json:"deleteResult"`
		IDs []string `json:"ids"`
	}
	env.call("A", "DELETE", "/entity/item/1?verbose=true", nil).ok(t).decode(t, &dr)
	if dr.Result.Matched != 253 || dr.Result.Removed != 253 || dr.IDs == nil || dr.ModelID != uuid.NewSHA1(uuid.NameSpaceURL, []byte("item.1")).String() {
		t.Errorf("delete by model: %+v", dr)
	}
	if n := env.count("A", "item", 1); n != 0 {
		t.Errorf("count after delete by model %d", n)
	}
	env.call("A", "DELETE", "/entity/nope/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
}

func (e *entityEnv) count(tenant, name string, version int) int {
	e.t.Helper()
	var c struct {
		Count int `json:"count"`
	}
	e.call(tenant, "GET", fmt.Sprintf("/entity/stats/%s/%d", name, version), nil).ok(e.t).decode(e.t, &c)
	return c.Count
}

func entityCollections(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "cat", 1, `{"name":"x","lives":9}`)
	env.lockedModel("A", "dog", 1, `{"name":"x","good":true}`)
	item := func(model string, payload string) map[string]any {
		return map[string]any{"model": map[string]any{"name": model, "version": 1}, "payload": payload}
	}
	body, _ := json.Marshal([]any{item("cat", `{"name":"tom","lives":7}`), item("dog", `{"name":"rex","good":true}`), item("cat", `{"name":"kit","lives":9}`)})
	var res []txResult
	env.call("A", "POST", "/entity/JSON", body).ok(t).decode(t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 3 {
		t.Fatalf("collection create %+v", res)
	}
	dogID := res[0].EntityIDs[1]
	if e := env.get("A", "/entity/"+dogID); e.Meta.ModelKey.Name != "dog" || string(e.Data) != `{"name":"rex","good":true}` {
		t.Errorf("dog: %+v %s", e.Meta, e.Data)
	}
	env.call("A", "POST", "/entity/JSON", []byte(`[{"model":{"name":"cat","version":1},"payload":{"name":"obj"}}]`)).problem(t, 400, "BAD_REQUEST")
	body, _ = json.Marshal([]any{item("cat", `{"name":"a","lives":1}`), item("cat", `{not json`)})
	if p := env.call("A", "POST", "/entity/JSON", body); !strings.Contains(string(p.body), "item 1: invalid JSON payload") {
		t.Errorf("bad payload: %s", p.body)
	}
	body, _ = json.Marshal([]any{item("cat", `{"name":"a","lives":1}`), item("cat", `{"name":"b","lives":2}`), item("bird", `{}`)})
	if p := env.call("A", "POST", "/entity/JSON", body); p.status != 404 || !strings.Contains(string(p.body), "item 2: ") {
		t.Errorf("unknown model: %d %s", p.status, p.body)
	}
	if n := env.count("A", "cat", 1); n != 2 {
		t.Errorf("cats after failed chunks: %d", n)
	}

	// Collection update: a stale ifMatch is isolated, the rest commits.
	catA, catB := res[0].EntityIDs[0], res[0].EntityIDs[2]
	catATx := env.get("A", "/entity/"+catA).Meta.TransactionID
	upd, _ := json.Marshal([]map[string]string{
		{"id": catA, "payload": `{"name":"tom","lives":6}`, "ifMatch": catATx},
		{"id": catB, "payload": `{"name":"kit","lives":8}`, "ifMatch": "0c5b2a4e-0000-1000-8000-000000000000"},
		{"id": dogID, "payload": `{"name":"rex","good":false}`, "transition": "UPDATE"},
	})
	env.call("A", "PUT", "/entity/JSON", upd).ok(t).decode(t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 2 || len(res[0].Failed) != 1 || res[0].Failed[0].EntityID != catB ||
		res[0].Failed[0].Error.Code != "ENTITY_MODIFIED" || res[0].Failed[0].Error.ItemIndex != 1 {
		t.Fatalf("collection update %s", env.call("A", "GET", "/entity/"+catA, nil).body)
	}
	if e := env.get("A", "/entity/"+catB); string(e.Data) != `{"name":"kit","lives":9}` {
		t.Errorf("stale item applied: %s", e.Data)
	}
	if e := env.get("A", "/entity/"+dogID); string(e.Data) != `{"name":"rex","good":false}` || *e.Meta.Transition != "UPDATE" {
		t.Errorf("dog after update: %s", e.Data)
	}
	// A missing entity fails the whole chunk.
	upd, _ = json.Marshal([]map[string]string{
		{"id": catA, "payload": `{"name":"tom","lives":5}`},
		{"id": "0c5b2a4e-0000-1000-8000-000000000000", "payload": `{"name":"ghost","lives":0}`},
	})
	env.call("A", "PUT", "/entity/JSON", upd).problem(t, 404, "ENTITY_NOT_FOUND")
	if e := env.get("A", "/entity/"+catA); string(e.Data) != `{"name":"tom","lives":6}` {
		t.Errorf("half of a failed chunk applied: %s", e.Data)
	}
	env.call("A", "PUT", "/entity/JSON", []byte(`[]`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "PUT", "/entity/XML", upd).problem(t, 400, "BAD_REQUEST")
	env.call("A", "PUT", "/entity/JSON", []byte(`[{"payload":"{}"}]`)).problem(t, 400, "BAD_REQUEST")
}

func entityPreconditions(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.call("A", "POST", "/entity/JSON/ghost/1", []byte(`{}`)).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("A", "POST", "/model/import/JSON/SAMPLE_DATA/draft/1", []byte(`{"a":1}`)).ok(t)
	env.call("A", "POST", "/entity/JSON/draft/1", []byte(`{"a":1}`)).problem(t, 409, "MODEL_NOT_LOCKED")
	env.call("A", "PUT", "/model/draft/1/lock", nil).ok(t)
	env.create("A", "draft", 1, `{"a":2}`)
	// The model service asks the entity service before unlocking.
	env.call("A", "PUT", "/model/draft/1/unlock", nil).problem(t, 409, "MODEL_HAS_ENTITIES")
	env.call("A", "DELETE", "/entity/draft/1", nil).ok(t)
	env.call("A", "PUT", "/model/draft/1/unlock", nil).ok(t)
}

func entityTenantIsolation(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "secret", 1, `{"v":1}`)
	id, tx := env.create("A", "secret", 1, `{"v":42}`)
	for _, c := range []struct{ method, path, body, ctype string }{
		{"GET", "/entity/" + id, "", ""},
		{"GET", "/entity/" + id + "?transactionId=" + tx, "", ""},
		{"GET", "/entity/" + id + "?pointInTime=2200-01-01T00:00:00Z", "", ""},
		{"GET", "/entity/" + id + "/changes", "", ""},
		{"GET", "/entity/" + id + "/transitions", "", ""},
		{"GET", "/platform-api/entity/fetch/transitions?entityClass=secret.1&entityId=" + id, "", ""},
		{"PUT", "/entity/JSON/" + id, `{"v":0}`, ""},
		{"PUT", "/entity/JSON/" + id + "/UPDATE", `{"v":0}`, ""},
		{"PATCH", "/entity/JSON/" + id, `{"v":0}`, "application/merge-patch+json"},
		{"DELETE", "/entity/" + id, "", ""},
	} {
		var b []byte
		if c.body != "" {
			b = []byte(c.body)
		}
		r := env.call("B", c.method, c.path, b, "Content-Type", c.ctype, "If-Match", "*")
		if r.status != 404 {
			t.Errorf("B %s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	upd, _ := json.Marshal([]map[string]string{{"id": id, "payload": `{"v":0}`}})
	env.call("B", "PUT", "/entity/JSON", upd).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("B", "GET", "/entity/secret/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("B", "DELETE", "/entity/secret/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("B", "GET", "/entity/stats/secret/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
	// B's own model of the same name is separate.
	env.lockedModel("B", "secret", 1, `{"v":1}`)
	if n := env.count("B", "secret", 1); n != 0 {
		t.Errorf("B counts A's entities: %d", n)
	}
	env.call("B", "DELETE", "/entity/secret/1", nil).ok(t)
	var stats []map[string]any
	env.call("B", "GET", "/entity/stats", nil).ok(t).decode(t, &stats)
	if fmt.Sprint(stats) != "[map[count:0 modelName:secret modelVersion:1]]" {
		t.Errorf("B's stats show A's data: %v", stats)
	}
	env.call("B", "GET", "/entity/stats/states", nil).ok(t).decode(t, &stats)
	if len(stats) != 0 {
		t.Errorf("B's by-state stats show A's data: %v", stats)
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"v":42}` || e.Meta.TransactionID != tx {
		t.Errorf("A's entity changed by B: %s", e.Data)
	}
}

func entityStats(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("S", "order", 1, `{"kind":"a","price":1.5,"flag":true}`)
	env.lockedModel("S", "empty", 1, `{"x":1}`)
	docs := []string{`{"kind":"a","price":1,"flag":true}`, `{"kind":"a","price":3,"flag":true}`, `{"kind":"b","price":10,"flag":false}`}
	var ids []string
	for _, d := range docs {
		id, _ := env.create("S", "order", 1, d)
		ids = append(ids, id)
	}
	mid := time.Now().UTC()
	env.call("S", "PUT", "/entity/JSON/"+ids[2]+"/DELETE", []byte(docs[2])).ok(t)

	var byModel []map[string]any
	env.call("S", "GET", "/entity/stats", nil).ok(t).decode(t, &byModel)
	if fmt.Sprint(byModel) != "[map[count:0 modelName:empty modelVersion:1] map[count:3 modelName:order modelVersion:1]]" {
		t.Errorf("stats %v", byModel)
	}
	var byState []map[string]any
	env.call("S", "GET", "/entity/stats/states", nil).ok(t).decode(t, &byState)
	if fmt.Sprint(byState) != "[map[count:2 modelName:order modelVersion:1 state:CREATED] map[count:1 modelName:order modelVersion:1 state:DELETED]]" {
		t.Errorf("by state %v", byState)
	}
	env.call("S", "GET", "/entity/stats/states/order/1?states=DELETED", nil).ok(t).decode(t, &byState)
	if len(byState) != 1 || byState[0]["state"] != "DELETED" {
		t.Errorf("filtered by state %v", byState)
	}
	env.call("S", "GET", "/entity/stats/states/order/1?pointInTime="+url.QueryEscape(mid.Format(time.RFC3339Nano)), nil).ok(t).decode(t, &byState)
	if len(byState) != 1 || byState[0]["count"] != float64(3) {
		t.Errorf("by state as at %v", byState)
	}
	env.call("S", "GET", "/entity/stats/states/zzz/1", nil).problem(t, 404, "MODEL_NOT_FOUND")

	q := `{"groupBy":["$.kind","state"],"aggregations":[{"op":"sum","field":"$.price"},{"op":"stdev","field":"$.price","as":"sd"}]}`
	var buckets []struct {
		GroupKey []struct {
			Path  string  `json:"path"`
			Value *string `json:"value"`
		} `json:"groupKey"`
		Count        int                 `json:"count"`
		Aggregations map[string]*float64 `json:"aggregations"`
	}
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(q)).ok(t).decode(t, &buckets)
	if len(buckets) != 2 || buckets[0].Count != 2 || *buckets[0].GroupKey[0].Value != "a" || buckets[0].GroupKey[1].Path != "state" ||
		*buckets[0].Aggregations["sum_price"] != 4 || buckets[1].Aggregations["sd"] != nil {
		t.Errorf("grouped %+v", buckets)
	}
	// A condition narrows the scan: only kind "a" with price > 1 (one entity).
	qc := `{"groupBy":["$.kind"],"aggregations":[{"op":"sum","field":"$.price"}],"condition":{"type":"group","operator":"AND","conditions":[` +
		`{"type":"simple","jsonPath":"$.kind","operatorType":"EQUALS","value":"a"},{"type":"simple","jsonPath":"$.price","operatorType":"GREATER_THAN","value":1}]}}`
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(qc)).ok(t).decode(t, &buckets)
	if len(buckets) != 1 || buckets[0].Count != 1 || *buckets[0].GroupKey[0].Value != "a" || *buckets[0].Aggregations["sum_price"] != 3 {
		t.Errorf("grouped with condition %+v", buckets)
	}
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.kind"],"condition":{"type":"simple","jsonPath":"$.nope","operatorType":"EQUALS","value":"a"}}`)).
		problem(t, 400, "INVALID_FIELD_PATH")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":[]}`)).problem(t, 400, "MISSING_GROUP_BY")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.a"],"bogus":1}`)).problem(t, 400, "MALFORMED_REQUEST")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.tags[*]"]}`)).problem(t, 400, "INVALID_GROUP_BY_PATH")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.a","$['a']"]}`)).problem(t, 400, "DUPLICATE_GROUP_BY")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.a"],"aggregations":[{"op":"median","field":"$.x"}]}`)).problem(t, 400, "INVALID_AGGREGATION_OP")
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.a"],"limit":51}`)).problem(t, 400, "INVALID_LIMIT")
	env.call("S", "POST", "/entity/stats/zzz/1/query", []byte(`{"groupBy":["$.a"]}`)).problem(t, 404, "MODEL_NOT_FOUND")
	// More distinct groups than SVC_STATS_GROUP_MAX (50 here) is 422.
	var many60 []string
	for i := 0; i < 60; i++ {
		many60 = append(many60, fmt.Sprintf(`{"kind":"k%d","price":1,"flag":true}`, i))
	}
	env.call("S", "POST", "/entity/JSON/order/1", []byte("["+strings.Join(many60, ",")+"]")).ok(t)
	env.call("S", "POST", "/entity/stats/order/1/query", []byte(`{"groupBy":["$.kind"],"limit":1}`)).problem(t, 422, "GROUP_CARDINALITY_EXCEEDED")
}

func entityConcurrentWriters(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "counter", 1, `{"n":1}`)
	id, _ := env.create("A", "counter", 1, `{"n":0}`)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				r := env.call("A", "PUT", "/entity/JSON/"+id, []byte(fmt.Sprintf(`{"n":%d}`, w*100+i)))
				if r.status == 409 {
					var p map[string]any
					json.Unmarshal(r.body, &p)
					props, _ := p["properties"].(map[string]any)
					if props["errorCode"] != "CONFLICT" || props["retryable"] != true {
						t.Errorf("409 body %s", r.body)
					}
				}
				mu.Lock()
				codes[r.status]++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if codes[200]+codes[409] != 80 {
		t.Fatalf("statuses %v: only 200 and 409 are acceptable", codes)
	}
	var cs []map[string]any
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &cs)
	if len(cs) != 1+codes[200] {
		t.Errorf("%d revisions after %d acknowledged updates: a write was lost or invented", len(cs), codes[200])
	}
	t.Logf("concurrent PUTs: %v", codes)
}

type deleteResult struct {
	ModelID string `json:"entityModelClassId"`
	Result  struct {
		IDToError map[string]any `json:"idToError"`
		Matched   int            `json:"numberOfEntitites"`
		Removed   int            `json:"numberOfEntititesRemoved"`
	} `json:"deleteResult"`
	IDs []string `json:"ids"`
}

// entityDeleteWhere: DELETE /entity/{name}/{version} with a condition body
// deletes the matching live entities in one transaction, selected now or
// as of pointInTime, and reports what it matched.
func entityDeleteWhere(t *testing.T, env *entityEnv) {
	env = env.with(t)
	env.lockedModel("A", "pet", 1, `{"name":"x","age":1}`)
	ids := make([]string, 6)
	for i := 1; i <= 5; i++ {
		ids[i], _ = env.create("A", "pet", 1, fmt.Sprintf(`{"name":"p%d","age":%d}`, i, i))
	}
	cond := func(op string, v int) []byte {
		return []byte(fmt.Sprintf(`{"type":"simple","jsonPath":"$.age","operatorType":"%s","value":%d}`, op, v))
	}

	// Errors: nothing is deleted.
	env.call("A", "DELETE", "/entity/pet/1", []byte(`{"type":"simple","jsonPath":`)).problem(t, 400, "INVALID_CONDITION")
	env.call("A", "DELETE", "/entity/pet/1", []byte(`{"type":"simple","jsonPath":"$.nope","operatorType":"EQUALS","value":1}`)).
		problem(t, 400, "INVALID_FIELD_PATH")
	env.call("A", "DELETE", "/entity/pet/1", []byte(`{"type":"simple","jsonPath":"$.age","operatorType":"GREATER_THAN","value":"old"}`)).
		problem(t, 400, "CONDITION_TYPE_MISMATCH")
	env.call("A", "DELETE", "/entity/nope/1", cond("EQUALS", 1)).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("B", "DELETE", "/entity/pet/1", cond("EQUALS", 1)).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("A", "DELETE", "/entity/pet/1?pointInTime=yesterday", cond("EQUALS", 1)).problem(t, 400, "BAD_REQUEST")
	if n := env.count("A", "pet", 1); n != 5 {
		t.Fatalf("count after refused deletes %d", n)
	}

	// age >= 4: two matched and removed, their ids listed when verbose.
	var dr deleteResult
	env.call("A", "DELETE", "/entity/pet/1?verbose=true", cond("GREATER_OR_EQUAL", 4)).ok(t).decode(t, &dr)
	sort.Strings(dr.IDs)
	want := []string{ids[4], ids[5]}
	sort.Strings(want)
	if dr.Result.Matched != 2 || dr.Result.Removed != 2 || strings.Join(dr.IDs, ",") != strings.Join(want, ",") ||
		dr.Result.IDToError == nil || dr.ModelID != uuid.NewSHA1(uuid.NameSpaceURL, []byte("pet.1")).String() {
		t.Fatalf("conditional delete: %+v want ids %v", dr, want)
	}
	env.call("A", "GET", "/entity/"+ids[4], nil).problem(t, 404, "ENTITY_NOT_FOUND")
	if e := env.get("A", "/entity/"+ids[3]); e.Meta.ID != ids[3] {
		t.Fatalf("a non-matching entity is gone: %+v", e.Meta)
	}
	if n := env.count("A", "pet", 1); n != 3 {
		t.Fatalf("count after conditional delete %d", n)
	}

	// As of an instant: p1 changed since (it no longer matches now, but
	// is deleted as it is now), p2 deleted since (matched, skipped).
	time.Sleep(5 * time.Millisecond)
	at := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	env.call("A", "PUT", "/entity/JSON/"+ids[1], []byte(`{"name":"p1","age":10}`)).ok(t)
	env.call("A", "DELETE", "/entity/"+ids[2], nil).ok(t)
	dr = deleteResult{}
	env.call("A", "DELETE", "/entity/pet/1?verbose=true", cond("LESS_OR_EQUAL", 2)).ok(t).decode(t, &dr)
	if dr.Result.Matched != 0 || dr.Result.Removed != 0 || dr.IDs == nil || len(dr.IDs) != 0 {
		t.Fatalf("nothing matches now: %+v", dr)
	}
	dr = deleteResult{}
	env.call("A", "DELETE", "/entity/pet/1?verbose=true&pointInTime="+url.QueryEscape(at), cond("LESS_OR_EQUAL", 2)).ok(t).decode(t, &dr)
	sort.Strings(dr.IDs)
	want = []string{ids[1], ids[2]}
	sort.Strings(want)
	if dr.Result.Matched != 2 || dr.Result.Removed != 1 || strings.Join(dr.IDs, ",") != strings.Join(want, ",") {
		t.Fatalf("delete as of %s: %+v want ids %v", at, dr, want)
	}
	env.call("A", "GET", "/entity/"+ids[1], nil).problem(t, 404, "ENTITY_NOT_FOUND")
	if n := env.count("A", "pet", 1); n != 1 {
		t.Fatalf("count after delete as of an instant %d", n)
	}

	// Without verbose there is no ids member.
	r := env.call("A", "DELETE", "/entity/pet/1", cond("EQUALS", 3))
	if r.status != 200 || strings.Contains(string(r.body), `"ids"`) {
		t.Fatalf("non-verbose: %d %s", r.status, r.body)
	}
	if n := env.count("A", "pet", 1); n != 0 {
		t.Fatalf("count at the end %d", n)
	}
}
