package fast

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/entity"
	"svc/storage"
	"svc/workflow"
)

// keyedResp is an answer with the replay marker.
type keyedResp struct {
	entityResp
	replayed string
}

func (e *entityEnv) keyed(tenant, method, path, key string, body []byte) keyedResp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if strings.Contains(path, "/ndjson/") {
		req.Header.Set("Content-Type", "application/x-ndjson")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return keyedResp{entityResp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}, resp.Header.Get("Idempotent-Replayed")}
}

// keyedOp is one operation that honours Idempotency-Key: its request and
// a count of what it wrote.
type keyedOp struct {
	name   string
	method string
	// path and body of the request; other is another body.
	path        func(e *entityEnv, tenant string) string
	body, other string
	count       func(e *entityEnv, tenant string) int64
}

func idemModel() storage.ModelKey { return storage.ModelKey{Name: "idem", Version: 1} }

func countEntities(e *entityEnv, tenant string) int64 {
	n, err := e.ents.Count(context.Background(), tenant, idemModel())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// target is the entity the update operations revise, one per tenant.
var idemTargets = map[*entityEnv]map[string]string{}

func idemTarget(e *entityEnv, tenant string) string {
	if id := idemTargets[e][tenant]; id != "" {
		return id
	}
	var res []txResult
	e.call(tenant, "POST", "/entity/JSON/idem/1", []byte(`{"a":0}`)).ok(e.t).decode(e.t, &res)
	if idemTargets[e] == nil {
		idemTargets[e] = map[string]string{}
	}
	idemTargets[e][tenant] = res[0].EntityIDs[0]
	return res[0].EntityIDs[0]
}

func countRevisions(e *entityEnv, tenant string) int64 {
	id := idemTarget(e, tenant)
	var h []any
	e.call(tenant, "GET", "/entity/"+id+"/changes", nil).ok(e.t).decode(e.t, &h)
	return int64(len(h))
}

func fixed(p string) func(*entityEnv, string) string {
	return func(*entityEnv, string) string { return p }
}

var keyedOps = []keyedOp{
	{name: "create", method: "POST", path: fixed("/entity/JSON/idem/1"), body: `{"a":1}`, other: `{"a":2}`, count: countEntities},
	{name: "create array", method: "POST", path: fixed("/entity/JSON/idem/1?transactionWindow=1"), body: `[{"a":1},{"a":2}]`, other: `[{"a":1}]`, count: countEntities},
	{name: "collection create", method: "POST", path: fixed("/entity/JSON"),
		body:  `[{"model":{"name":"idem","version":1},"payload":"{\"a\":1}"}]`,
		other: `[{"model":{"name":"idem","version":1},"payload":"{\"a\":3}"}]`, count: countEntities},
	{name: "ndjson stream", method: "POST", path: fixed("/entity/ndjson/idem/1?transactionWindow=1"), body: "{\"a\":1}\n{\"a\":2}\n", other: "{\"a\":1}\n", count: countEntities},
	{name: "transition", method: "PUT", path: func(e *entityEnv, tenant string) string { return "/entity/JSON/" + idemTarget(e, tenant) + "/touch" },
		body: `{"a":5}`, other: `{"a":6}`, count: countRevisions},
	{name: "loopback update", method: "PUT", path: func(e *entityEnv, tenant string) string { return "/entity/JSON/" + idemTarget(e, tenant) },
		body: `{"a":7}`, other: `{"a":8}`, count: countRevisions},
}

// TestIdempotencyKey: on every engine and every keyed operation, a repeat
// of a request under its key replays the first answer (status, body and
// Idempotent-Replayed: true) and writes nothing; another body under the
// key is 422; the same key in another tenant is another write; a key past
// the retention is new.
func TestIdempotencyKey(t *testing.T) {
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
			e := newEntityEnv(t, engine, entity.WithWorkflow(entity.NewEngineWorkflow(eng)))
			wf := `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"OPEN","states":{"OPEN":{"transitions":[{"name":"touch","next":"OPEN","manual":true}]}}}]}`
			for _, tenant := range []string{"ta", "tb"} {
				e.lockedModel(tenant, "idem", 1, `{"a":1}`)
				e.call(tenant, "POST", "/model/idem/1/workflow/import", []byte(wf)).ok(t)
			}
			for i, op := range keyedOps {
				t.Run(op.name, func(t *testing.T) {
					key := fmt.Sprintf("key-%d", i)
					path := op.path(e, "ta")
					before := op.count(e, "ta")
					first := e.keyed("ta", op.method, path, key, []byte(op.body))
					if first.status != 200 || first.replayed != "" {
						t.Fatalf("first: %d replayed=%q %s", first.status, first.replayed, first.body)
					}
					wrote := op.count(e, "ta") - before
					if wrote <= 0 {
						t.Fatalf("the first request wrote nothing")
					}
					again := e.keyed("ta", op.method, path, key, []byte(op.body))
					if again.status != first.status || !bytes.Equal(again.body, first.body) || again.replayed != "true" || again.ctype != first.ctype {
						t.Fatalf("repeat: %d %q replayed=%q, want %d %q replayed=true", again.status, again.body, again.replayed, first.status, first.body)
					}
					if n := op.count(e, "ta") - before; n != wrote {
						t.Fatalf("the repeat wrote: %d, want %d", n, wrote)
					}
					e.keyed("ta", op.method, path, key, []byte(op.other)).problem(t, 422, "IDEMPOTENCY_KEY_REUSED")
					if n := op.count(e, "ta") - before; n != wrote {
						t.Fatalf("the reused key wrote: %d, want %d", n, wrote)
					}
					// Another tenant's key of the same name is its own.
					otherBefore := op.count(e, "tb")
					o := e.keyed("tb", op.method, op.path(e, "tb"), key, []byte(op.body))
					if o.status != 200 || o.replayed != "" || op.count(e, "tb")-otherBefore != wrote {
						t.Fatalf("other tenant: %d replayed=%q %s", o.status, o.replayed, o.body)
					}
					// Past the retention the key is new.
					e.clock.Store(int64(25 * time.Hour))
					defer e.clock.Store(0)
					late := e.keyed("ta", op.method, path, key, []byte(op.body))
					if late.status != 200 || late.replayed != "" || bytes.Equal(late.body, first.body) {
						t.Fatalf("past the retention: %d replayed=%q %s", late.status, late.replayed, late.body)
					}
					if n := op.count(e, "ta") - before; n != 2*wrote {
						t.Fatalf("past the retention wrote %d in all, want %d", n, 2*wrote)
					}
				})
			}
		})
	}
}

// TestIdempotencyKeyInFlight: a repeat while the first request of its key
// still runs is 409 IDEMPOTENCY_CONFLICT (retryable) and writes nothing;
// once the first is done the repeat replays it. The first request is held
// in the key service's reservation hook, so nothing depends on timing.
func TestIdempotencyKeyInFlight(t *testing.T) {
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newEntityEnv(t, engine)
			e.lockedModel("ta", "idem", 1, `{"a":1}`)
			entered, release := make(chan struct{}), make(chan struct{})
			hold := func(key string) {
				if key == "slow" {
					close(entered)
					<-release
				}
			}
			e.reserved.Store(&hold)
			done := make(chan keyedResp, 1)
			go func() { done <- e.keyed("ta", "POST", "/entity/JSON/idem/1", "slow", []byte(`{"a":1}`)) }()
			<-entered
			p := e.keyed("ta", "POST", "/entity/JSON/idem/1", "slow", []byte(`{"a":1}`)).problem(t, 409, "IDEMPOTENCY_CONFLICT")
			if p["retryable"] != true {
				t.Fatalf("409 not retryable: %v", p)
			}
			// Another body while in flight is the reuse.
			e.keyed("ta", "POST", "/entity/JSON/idem/1", "slow", []byte(`{"a":2}`)).problem(t, 422, "IDEMPOTENCY_KEY_REUSED")
			if n := countEntities(e, "ta"); n != 0 {
				t.Fatalf("%d entities while the first request is held", n)
			}
			close(release)
			first := <-done
			if first.status != 200 {
				t.Fatalf("first: %d %s", first.status, first.body)
			}
			again := e.keyed("ta", "POST", "/entity/JSON/idem/1", "slow", []byte(`{"a":1}`))
			if again.replayed != "true" || !bytes.Equal(again.body, first.body) {
				t.Fatalf("after the first: %d replayed=%q %s", again.status, again.replayed, again.body)
			}
			if n := countEntities(e, "ta"); n != 1 {
				t.Fatalf("%d entities, want 1", n)
			}
		})
	}
}

// TestIdempotencyKeyRefusals: a key out of bounds is 400 naming the
// header; a refused request releases its key, so the corrected retry runs.
func TestIdempotencyKeyRefusals(t *testing.T) {
	e := newEntityEnv(t, "memory")
	e.lockedModel("ta", "idem", 1, `{"a":1}`)
	p := e.keyed("ta", "POST", "/entity/JSON/idem/1", strings.Repeat("k", 256), []byte(`{"a":1}`)).problem(t, 400, "BAD_REQUEST")
	if p["parameter"] != "Idempotency-Key" {
		t.Fatalf("properties %v do not name the header", p)
	}
	e.keyed("ta", "POST", "/entity/JSON/idem/1", strings.Repeat("k", 255), []byte(`{"a":1}`)).ok(t)
	// A document the model refuses: nothing written, the key released.
	bad := e.keyed("ta", "POST", "/entity/JSON/idem/1", "refused", []byte(`{"a":"text"}`))
	if bad.status != 400 {
		t.Fatalf("refused document: %d %s", bad.status, bad.body)
	}
	if r := e.keyed("ta", "POST", "/entity/JSON/idem/1", "refused", []byte(`{"a":"text"}`)); r.replayed != "" || r.status != 400 {
		t.Fatalf("a refused request was stored: %d replayed=%q", r.status, r.replayed)
	}
	ok := e.keyed("ta", "POST", "/entity/JSON/idem/1", "refused", []byte(`{"a":2}`))
	if ok.status != 200 || ok.replayed != "" {
		t.Fatalf("after a refusal the key should be free: %d %s", ok.status, ok.body)
	}
	var res []txResult
	if err := json.Unmarshal(ok.body, &res); err != nil || len(res) != 1 {
		t.Fatalf("answer %s: %v", ok.body, err)
	}
}
