package fast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	json "github.com/goccy/go-json"

	"svc/compute"
	"svc/compute/member"
	"svc/txtoken"
)

// TestCommitBeforeDispatch drives COMMIT_BEFORE_DISPATCH processors over
// HTTP with a real member on loopback gRPC, on every engine: the entity is
// durable in its pre-callout state while the member works (the member
// reads it back over HTTP), the answer names the entry transaction, the
// result lands in a second transaction, a failing processor leaves the
// pre-callout revision, a writer that gets in during the callout makes the
// request 409 CONFLICT, a stale If-Match is 412 before any dispatch, and
// several entities in one transaction are refused.
func TestCommitBeforeDispatch(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newBehavEnv(t, engine, compute.Config{})
			commitBeforeDispatch(t, env)
		})
	}
}

// TestCommitBeforeDispatchTwice: two COMMIT_BEFORE_DISPATCH processors in
// one pipeline make three transactions; every state-machine event still
// names the entry transaction, in order (the audit sequence continues
// across the segments).
func TestCommitBeforeDispatchTwice(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newBehavEnv(t, engine, compute.Config{})
			env.lockedModel("A", "twice", 1, `{"n":1}`)
			env.workflows("A", "twice", 1, `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
			  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false,"processors":[
			    {"name":"one","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"calculationNodesTags":"twice"}},
			    {"name":"two","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"calculationNodesTags":"twice"}}]}]},
			  "DONE":{}}}]}`)
			env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				var doc struct {
					N int `json:"n"`
				}
				if err := json.Unmarshal(c.Request.Payload.Data, &doc); err != nil {
					return nil, err
				}
				return json.RawMessage(fmt.Sprintf(`{"n":%d}`, doc.N+1)), nil
			}}, "twice")
			id, entry := env.create("A", "twice", 1, `{"n":1}`)
			e := env.get("A", "/entity/"+id)
			if e.Meta.State != "DONE" || string(e.Data) != `{"n":3}` {
				t.Fatalf("entity %+v %s", e.Meta, e.Data)
			}
			var changes []map[string]any
			env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
			if len(changes) != 3 {
				t.Fatalf("changes %v", changes)
			}
			items := env.trail("A", id, "")
			if got := trailKinds(items); got != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING CREATE "+
				"STATE_PROCESS_RESULT UPDATE STATE_PROCESS_RESULT TRANSITION_MAKE STATE_MACHINE_FINISH UPDATE" {
				t.Fatalf("trail %s", got)
			}
			for i, it := range items {
				if it.AuditEventType == "StateMachine" && it.TransactionID != entry {
					t.Fatalf("trail item %d (%s) in %s, want %s", i, it.kind(), it.TransactionID, entry)
				}
			}
			if items[9].TransactionID != e.Meta.TransactionID {
				t.Fatalf("last change in %s, want %s", items[9].TransactionID, e.Meta.TransactionID)
			}
		})
	}
}

// seenEntity is what the member read back during its callout.
type seenEntity struct {
	status int
	env    envelope
}

func commitBeforeDispatch(t *testing.T, env *behavEnv) {
	env = env.with(t)
	env.lockedModel("A", "order", 1, `{"amount":1,"note":"x"}`)
	env.workflows("A", "order", 1, `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
	  "NEW":{"transitions":[
	    {"name":"settle","next":"DONE","manual":false,"processors":[
	      {"name":"pre","executionMode":"SYNC","config":{"calculationNodesTags":"cbd"}},
	      {"name":"book","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"calculationNodesTags":"cbd","startNewTxOnDispatch":true}}]},
	    {"name":"hold","next":"HELD","manual":true}]},
	  "DONE":{"transitions":[{"name":"again","next":"DONE","manual":true,"processors":[
	      {"name":"pre","executionMode":"SYNC","config":{"calculationNodesTags":"cbd"}},
	      {"name":"book","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"calculationNodesTags":"cbd"}}]}]},
	  "HELD":{}}}]}`)

	// read fetches an entity from inside the member (no testing.T there).
	read := func(path string) seenEntity {
		req, _ := http.NewRequest("GET", env.base+path, nil)
		req.Header.Set("Authorization", "Bearer A")
		resp, err := env.client.Do(req)
		if err != nil {
			return seenEntity{status: -1}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var s seenEntity
		s.status = resp.StatusCode
		_ = json.Unmarshal(b, &s.env)
		return s
	}
	write := func(method, path, body string) int {
		req, _ := http.NewRequest(method, env.base+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer A")
		resp, err := env.client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var books atomic.Int32
	seen := make(chan seenEntity, 8)
	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		var doc struct {
			Amount int    `json:"amount"`
			Note   string `json:"note"`
		}
		if err := json.Unmarshal(c.Request.Payload.Data, &doc); err != nil {
			return nil, err
		}
		if c.Request.ProcessorName == "pre" {
			if doc.Amount == 66 { // another writer commits before TX_pre
				if code := write("PUT", "/entity/JSON/"+c.Request.EntityID, `{"amount":1,"note":"other"}`); code != 200 {
					return nil, fmt.Errorf("concurrent write: %d", code)
				}
			}
			return json.RawMessage(fmt.Sprintf(`{"amount":%d,"note":"pre"}`, doc.Amount)), nil
		}
		books.Add(1)
		// startNewTxOnDispatch (settle) sends TX_post's token, never the
		// committed entry transaction's; without it (again) the member
		// runs outside any transaction and gets none.
		if newTx := c.Request.Transition.Name == "settle"; newTx != (c.TxToken != "") {
			return nil, fmt.Errorf("transition %s: COMMIT_BEFORE_DISPATCH member got token %q", c.Request.Transition.Name, c.TxToken)
		}
		if c.TxToken != "" {
			if _, _, cl, err := txtoken.Parse(c.TxToken); err != nil || cl.Tx == c.Request.TransactionID {
				return nil, fmt.Errorf("token %q names the entry transaction %s (%v)", c.TxToken, c.Request.TransactionID, err)
			}
		}
		seen <- read("/entity/" + c.Request.EntityID)
		switch doc.Amount {
		case 13:
			return nil, errors.New("unlucky")
		case 7: // another writer commits while the member works
			if code := write("PUT", "/entity/JSON/"+c.Request.EntityID+"/hold", `{"amount":8,"note":"other"}`); code != 200 {
				return nil, fmt.Errorf("concurrent write: %d", code)
			}
		}
		return json.RawMessage(fmt.Sprintf(`{"amount":%d,"note":"booked"}`, doc.Amount*10)), nil
	}}, "cbd")

	// Create: pre-callout state durable during the callout, result after.
	id, entry := env.create("A", "order", 1, `{"amount":1,"note":"x"}`)
	s := <-seen
	if s.status != 200 || s.env.Meta.State != "NEW" || string(s.env.Data) != `{"amount":1,"note":"pre"}` || s.env.Meta.TransactionID != entry {
		t.Fatalf("the member saw %d %+v %s, want the pre-callout revision of %s", s.status, s.env.Meta, s.env.Data, entry)
	}
	e := env.get("A", "/entity/"+id)
	if e.Meta.State != "DONE" || string(e.Data) != `{"amount":10,"note":"booked"}` || e.Meta.TransactionID == entry {
		t.Fatalf("after the callout: %+v %s", e.Meta, e.Data)
	}
	if pre := env.get("A", "/entity/"+id+"?transactionId="+entry); pre.Meta.State != "NEW" {
		t.Fatalf("the entry transaction's revision: %+v", pre.Meta)
	}
	var changes []map[string]any
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
	if len(changes) != 2 || changes[0]["changeType"] != "UPDATE" || changes[1]["changeType"] != "CREATE" {
		t.Fatalf("changes %v", changes)
	}
	// The trail: the run up to the pause written with the pre-callout
	// revision, the rest with the result; every state-machine event names
	// the entry transaction, each change the transaction that wrote it.
	items := env.trail("A", id, "")
	if got := trailKinds(items); got != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING STATE_PROCESS_RESULT CREATE "+
		"STATE_PROCESS_RESULT TRANSITION_MAKE STATE_MACHINE_FINISH UPDATE" {
		t.Fatalf("trail %s", got)
	}
	for i, it := range items {
		want := entry
		if it.kind() == "UPDATE" {
			want = e.Meta.TransactionID
		}
		if it.TransactionID != want {
			t.Fatalf("trail item %d (%s) in transaction %s, want %s", i, it.kind(), it.TransactionID, want)
		}
	}
	var fin auditItem
	env.call("A", "GET", "/audit/entity/"+id+"/workflow/"+entry+"/finished", nil).ok(t).decode(t, &fin)
	if fin.EventType != "STATE_MACHINE_FINISH" || *fin.State != "DONE" {
		t.Fatalf("finished by the entry transaction: %+v", fin)
	}

	// A failing processor: the request fails, the entity stays durable in
	// its pre-callout state.
	r := env.call("A", "POST", "/entity/JSON/order/1", []byte(`{"amount":13,"note":"x"}`))
	r.problem(t, 400, "WORKFLOW_FAILED")
	s = <-seen
	if s.status != 200 || s.env.Meta.State != "NEW" {
		t.Fatalf("the failing member saw %d %+v", s.status, s.env.Meta)
	}
	if after := env.get("A", "/entity/"+s.env.Meta.ID); after.Meta.State != "NEW" || string(after.Data) != `{"amount":13,"note":"pre"}` {
		t.Fatalf("after a failed callout: %+v %s", after.Meta, after.Data)
	}

	// Another writer during the callout: 409 CONFLICT, retryable; its
	// write stands.
	r = env.call("A", "POST", "/entity/JSON/order/1", []byte(`{"amount":7,"note":"x"}`))
	if p := r.problem(t, 409, "CONFLICT"); p["retryable"] != true {
		t.Fatalf("conflict not retryable: %s", r.body)
	}
	s = <-seen
	if after := env.get("A", "/entity/"+s.env.Meta.ID); after.Meta.State != "HELD" || string(after.Data) != `{"amount":8,"note":"other"}` {
		t.Fatalf("the concurrent write was lost: %+v %s", after.Meta, after.Data)
	}

	// Update: a stale If-Match is 412 before anything is dispatched; the
	// current one segments like a create.
	before := books.Load()
	env.call("A", "PUT", "/entity/JSON/"+id+"/again", []byte(`{"amount":2,"note":"y"}`), "If-Match", entry).
		problem(t, 412, "ENTITY_MODIFIED")
	if books.Load() != before {
		t.Fatal("a stale If-Match still dispatched")
	}
	var res txResult
	env.call("A", "PUT", "/entity/JSON/"+id+"/again", []byte(`{"amount":2,"note":"y"}`), "If-Match", e.Meta.TransactionID).ok(t).decode(t, &res)
	s = <-seen
	if s.env.Meta.TransactionID != res.TransactionID || string(s.env.Data) != `{"amount":2,"note":"pre"}` {
		t.Fatalf("update: member saw %+v %s, answer %s", s.env.Meta, s.env.Data, res.TransactionID)
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"amount":20,"note":"booked"}` || e.Meta.TransactionID == res.TransactionID {
		t.Fatalf("after the update's callout: %+v %s", e.Meta, e.Data)
	}

	// PATCH and a one-item collection update segment the same way.
	env.call("A", "PATCH", "/entity/JSON/"+id+"/again", []byte(`{"amount":3}`),
		"Content-Type", "application/merge-patch+json", "If-Match", "*").ok(t).decode(t, &res)
	if s := <-seen; s.env.Meta.TransactionID != res.TransactionID || string(s.env.Data) != `{"amount":3,"note":"pre"}` {
		t.Fatalf("patch: member saw %+v %s, answer %s", s.env.Meta, s.env.Data, res.TransactionID)
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"amount":30,"note":"booked"}` {
		t.Fatalf("after the patch's callout: %s", e.Data)
	}
	upd, _ := json.Marshal([]map[string]string{{"id": id, "payload": `{"amount":4,"note":"z"}`, "transition": "again"}})
	var chunks []txResult
	env.call("A", "PUT", "/entity/JSON", upd).ok(t).decode(t, &chunks)
	if s := <-seen; len(chunks) != 1 || s.env.Meta.TransactionID != chunks[0].TransactionID || string(s.env.Data) != `{"amount":4,"note":"pre"}` {
		t.Fatalf("collection update: member saw %+v %s, answer %+v", s.env.Meta, s.env.Data, chunks)
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"amount":40,"note":"booked"}` || e.Meta.TransactionID == chunks[0].TransactionID {
		t.Fatalf("after the collection update's callout: %+v %s", e.Meta, e.Data)
	}

	// A writer that commits between the read and TX_pre: TX_pre's
	// compare-and-set fails before anything is dispatched, 412 under
	// If-Match, else 409 CONFLICT.
	before = books.Load()
	cur := env.get("A", "/entity/"+id).Meta.TransactionID
	env.call("A", "PUT", "/entity/JSON/"+id+"/again", []byte(`{"amount":66,"note":"y"}`), "If-Match", cur).
		problem(t, 412, "ENTITY_MODIFIED")
	r = env.call("A", "PUT", "/entity/JSON/"+id+"/again", []byte(`{"amount":66,"note":"y"}`))
	if p := r.problem(t, 409, "CONFLICT"); p["retryable"] != true {
		t.Fatalf("TX_pre conflict not retryable: %s", r.body)
	}
	if books.Load() != before {
		t.Fatal("dispatched after a lost TX_pre")
	}
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"amount":1,"note":"other"}` {
		t.Fatalf("the other writer's document was lost: %s", e.Data)
	}

	// Several entities in one transaction cannot segment; one per
	// transaction can.
	before = books.Load()
	env.call("A", "POST", "/entity/JSON/order/1?transactionWindow=2", []byte(`[{"amount":3,"note":"a"},{"amount":4,"note":"b"}]`)).
		problem(t, 400, "WORKFLOW_FAILED")
	if books.Load() != before {
		t.Fatal("a shared transaction was segmented")
	}
	upd, _ = json.Marshal([]map[string]string{{"id": id, "payload": `{"amount":5,"note":"z"}`, "transition": "again"},
		{"id": id, "payload": `{"amount":6,"note":"z"}`, "transition": "again"}})
	env.call("A", "PUT", "/entity/JSON", upd).problem(t, 400, "WORKFLOW_FAILED")
	if books.Load() != before {
		t.Fatal("a shared collection-update transaction was segmented")
	}
	env.call("A", "POST", "/entity/JSON/order/1?transactionWindow=1", []byte(`[{"amount":3,"note":"a"},{"amount":4,"note":"b"}]`)).ok(t).decode(t, &chunks)
	if len(chunks) != 2 {
		t.Fatalf("chunks %+v", chunks)
	}
	for i, c := range chunks {
		<-seen
		if e := env.get("A", "/entity/"+c.EntityIDs[0]); e.Meta.State != "DONE" || !strings.Contains(string(e.Data), `"booked"`) {
			t.Fatalf("chunk %d: %+v %s", i, e.Meta, e.Data)
		}
	}
}
