package fast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/audit"
	"svc/compute"
	"svc/compute/crud"
	"svc/compute/member"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/entity"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage/memory"
	"svc/txtoken"
	"svc/workflow"
)

// joinEnv is a running svc (HTTP API and the compute listener with its
// CRUD RPCs) whose members call back into the transactions they serve.
type joinEnv struct {
	*behavEnv
	rpc cloudapi.CloudEventsServiceClient
	// sg signs the service's routing tokens, on a clock skew ahead of
	// the wall clock (advance), so a test outlives a token's lifetime
	// without waiting it out.
	sg   *txtoken.Signer
	skew *atomic.Int64
	// proc is the member's processor behaviour of the current step.
	mu   sync.Mutex
	proc func(ctx context.Context, c *member.Call) (json.RawMessage, error)
}

func newJoinEnv(t *testing.T, engine string, ttl time.Duration) *joinEnv {
	t.Helper()
	ms, es, as, sr := testStores(t, engine)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	csrv := compute.New(compute.Config{}, memberTokens{}, slog.New(slog.DiscardHandler))
	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: csrv, Log: slog.New(slog.DiscardHandler)}
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	sg, err := txtoken.NewRandom("node-1", ttl)
	if err != nil {
		t.Fatal(err)
	}
	skew := new(atomic.Int64)
	sg = sg.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)),
		entity.WithConditions(ssvc), entity.WithTxTokens(sg))
	msvc.SetEntityCounter(esvc)
	csrv.Start(lis, crud.New(crud.Services{Entities: esvc, Models: msvc, Search: ssvc}, memberTokens{}, slog.New(slog.DiscardHandler)))
	t.Cleanup(csrv.Stop)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Audit: audit.New(as, es), Search: ssvc})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	env := &joinEnv{behavEnv: &behavEnv{entityEnv: &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc},
		grpcAddr: lis.Addr().String(), compute: csrv}, rpc: cloudapi.NewCloudEventsServiceClient(conn), sg: sg, skew: skew}
	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		env.mu.Lock()
		p := env.proc
		env.mu.Unlock()
		if p == nil {
			return nil, errors.New("no processor behaviour set")
		}
		return p(ctx, c)
	}}, "join")
	return env
}

func (e *joinEnv) onProcess(p func(ctx context.Context, c *member.Call) (json.RawMessage, error)) {
	e.mu.Lock()
	e.proc = p
	e.mu.Unlock()
}

// httpCall is a callback over HTTP, safe off the test goroutine.
func (e *joinEnv) httpCall(tenant, tok, method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("X-Tx-Token", tok)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// problemCode is the errorCode of a problem+json body.
func problemCode(b []byte) string {
	var p struct {
		Properties struct {
			ErrorCode string `json:"errorCode"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Properties.ErrorCode
}

// grpcCallCtx calls entityManage with ctx's metadata as it is.
func (e *joinEnv) grpcCallCtx(ctx context.Context, typ string, req any, out any) error {
	ev, err := wire.New("urn:test", typ, req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rev, err := e.rpc.EntityManage(ctx, ev)
	if err != nil {
		return err
	}
	return wire.Decode(rev, out)
}

// grpcCall is a callback over the gRPC CRUD RPCs as tenant's member,
// with tx-token metadata when tok is set; out receives the response.
func (e *joinEnv) grpcCall(tenant, tok, typ string, req any, out any) error {
	ev, err := wire.New("urn:test", typ, req)
	if err != nil {
		return err
	}
	md := []string{"authorization", "Bearer m2m-" + tenant}
	if tok != "" {
		md = append(md, "tx-token", tok)
	}
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), md...), 20*time.Second)
	defer cancel()
	rev, err := e.rpc.EntityManage(ctx, ev)
	if err != nil {
		return err
	}
	return wire.Decode(rev, out)
}

// recv takes what the member reported, or fails the test when it never
// reported (its callback failed before).
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("the member reported nothing")
	}
	var zero T
	return zero
}

// checks collects the member's findings; the processor fails with them,
// so the owner's request reports them.
type checks []string

func (c *checks) expect(ok bool, format string, a ...any) {
	if !ok {
		*c = append(*c, fmt.Sprintf(format, a...))
	}
}

func (c checks) err() error {
	if len(c) == 0 {
		return nil
	}
	return errors.New(strings.Join(c, "; "))
}

const joinWorkflow = `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false,"processors":[
    {"name":"p","executionMode":"SYNC","config":{"calculationNodesTags":"join"}}]}]},
  "DONE":{"transitions":[{"name":"redo","next":"DONE","manual":true,"processors":[
    {"name":"p","executionMode":"SYNC","config":{"calculationNodesTags":"join"}}]},
    {"name":"book","next":"BOOKED","manual":true,"processors":[
    {"name":"b","executionMode":"COMMIT_BEFORE_DISPATCH","config":{"calculationNodesTags":"join","startNewTxOnDispatch":true}}]},
    {"name":"async","next":"DONE","manual":true,"processors":[
    {"name":"a","executionMode":"ASYNC_NEW_TX","config":{"calculationNodesTags":"join"}}]}]},
  "BOOKED":{}}}]}`

func (e *joinEnv) setupModels() {
	e.lockedModel("A", "order", 1, `{"n":1,"note":"x"}`)
	e.workflows("A", "order", 1, joinWorkflow)
	e.lockedModel("A", "side", 1, `{"k":"v"}`)
	e.lockedModel("B", "side", 1, `{"k":"v"}`)
}

// TestJoinCallbacks: a processor on a real member calls back over HTTP
// and over the gRPC CRUD RPCs with the token it was dispatched with. Its
// writes land in the owner's transaction (same id, one revision per
// entity, committed with the owner), its reads see them while the
// outside world does not, and when the owner fails afterwards they are
// gone. On every engine.
func TestJoinCallbacks(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newJoinEnv(t, engine, time.Minute)
			env.setupModels()
			sg := make(chan string, 4) // side ids created by callbacks
			toks := make(chan string, 4)
			env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				var ck checks
				tx := c.Request.TransactionID
				_, _, claims, err := txtoken.Parse(c.TxToken)
				ck.expect(err == nil && claims.Tx == tx && claims.Node == "node-1", "cyodatxtoken %q does not name %s: %v", c.TxToken, tx, err)
				toks <- c.TxToken
				// Create over HTTP inside the transaction.
				st, b, err := env.httpCall("A", c.TxToken, "POST", "/entity/JSON/side/1", `{"k":"http"}`)
				var res []txResult
				_ = json.Unmarshal(b, &res)
				if err != nil || st != 200 || len(res) != 1 || len(res[0].EntityIDs) != 1 {
					return nil, fmt.Errorf("callback create: %d %s %v", st, b, err)
				}
				ck.expect(res[0].TransactionID == tx, "callback create reports %s, want the owner's %s", res[0].TransactionID, tx)
				side := res[0].EntityIDs[0]
				sg <- side
				// The joined read sees it; a standalone read does not.
				st, b, _ = env.httpCall("A", c.TxToken, "GET", "/entity/"+side, "")
				var got envelope
				_ = json.Unmarshal(b, &got)
				ck.expect(st == 200 && string(got.Data) == `{"k":"http"}` && got.Meta.TransactionID == tx, "joined read: %d %s", st, b)
				st, _, _ = env.httpCall("A", "", "GET", "/entity/"+side, "")
				ck.expect(st == 404, "standalone read of an uncommitted entity: %d", st)
				// Update over gRPC in the same transaction (the member's own
				// callback metadata), then read it back.
				var tr wire.TransactionResponse
				err = env.grpcCallCtx(c.CallbackContext(ctx), wire.TypeEntityUpdateRequest,
					map[string]any{"dataFormat": "JSON", "payload": map[string]any{"entityId": side, "data": map[string]any{"k": "grpc"}}}, &tr)
				ck.expect(err == nil && tr.Success && tr.TransactionInfo.TransactionID == tx, "gRPC update: %+v %v", tr, err)
				var er wire.EntityResponse
				err = env.grpcCall("A", c.TxToken, wire.TypeEntityGetRequest, map[string]any{"entityId": side}, &er)
				ck.expect(err == nil && er.Success && string(er.Payload.Data) == `{"k":"grpc"}`, "gRPC joined read: %+v %v", er, err)
				// Another tenant cannot use the token.
				st, b, _ = env.httpCall("B", c.TxToken, "GET", "/entity/"+side, "")
				ck.expect(st == 403 && problemCode(b) == "FORBIDDEN", "tenant B over HTTP: %d %s", st, b)
				var erB wire.EntityResponse
				err = env.grpcCall("B", c.TxToken, wire.TypeEntityGetRequest, map[string]any{"entityId": side}, &erB)
				ck.expect(err == nil && !erB.Success && erB.Error != nil && strings.HasPrefix(erB.Error.Message, "FORBIDDEN: "), "tenant B over gRPC: %+v %v", erB.Error, err)
				if err := ck.err(); err != nil {
					return nil, err
				}
				var doc map[string]any
				_ = json.Unmarshal(c.Request.Payload.Data, &doc)
				if doc["note"] == "fail" {
					return nil, errors.New("owner fails after its callbacks wrote")
				}
				return json.RawMessage(`{"n":2,"note":"processed"}`), nil
			})

			// Success: everything commits together under the entry id.
			id, entry := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
			side := recv(t, sg)
			tok := recv(t, toks)
			if o := env.get("A", "/entity/"+id); o.Meta.State != "DONE" || string(o.Data) != `{"n":2,"note":"processed"}` {
				t.Fatalf("owner %+v %s", o.Meta, o.Data)
			}
			s := env.get("A", "/entity/"+side)
			if string(s.Data) != `{"k":"grpc"}` || s.Meta.TransactionID != entry {
				t.Fatalf("callback entity %s in %s, want {\"k\":\"grpc\"} in %s", s.Data, s.Meta.TransactionID, entry)
			}
			var changes []map[string]any
			env.call("A", "GET", "/entity/"+side+"/changes", nil).ok(t).decode(t, &changes)
			if len(changes) != 1 {
				t.Fatalf("callback create and update in one transaction made %d revisions: %v", len(changes), changes)
			}
			// Issue 13 item 4: the joined write is attributed to the owner's
			// principal (u-A, a user) and executed by the member whose save
			// came last (its gRPC update as service m-A).
			if c := changes[0]; c["user"] != "u-A" || c["attributedKind"] != "user" || fmt.Sprint(c["executedBy"]) != "map[id:m-A kind:service]" {
				t.Fatalf("callback entity's change attribution: %v", c)
			}
			// The same on the gRPC changes request.
			var metas []wire.ChangeMeta
			if err := env.grpcStream("A", "", wire.TypeEntityChangesMetadataGetRequest, map[string]any{"id": "ch", "entityId": side},
				func(ev *ce.CloudEvent) error {
					var r wire.ChangesResponse
					if err := wire.Decode(ev, &r); err != nil {
						return err
					}
					metas = append(metas, r.ChangeMeta)
					return nil
				}); err != nil || len(metas) != 1 || metas[0].User != "u-A" || metas[0].AttributedKind != "user" ||
				metas[0].ExecutedBy == nil || *metas[0].ExecutedBy != (wire.Principal{ID: "m-A", Kind: "service"}) {
				t.Fatalf("gRPC changes of the callback entity: %+v %v", metas, err)
			}
			// The owner's own revision: its user, executed by itself.
			env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
			if c := changes[0]; c["user"] != "u-A" || c["attributedKind"] != "user" || fmt.Sprint(c["executedBy"]) != "map[id:u-A kind:user]" {
				t.Fatalf("owner's change attribution (processor-driven data): %v", c)
			}
			// The committed transaction is no longer joinable.
			env.call("A", "GET", "/entity/"+side, nil, "X-Tx-Token", tok).problem(t, 404, "TRANSACTION_NOT_FOUND")
			var er wire.EntityResponse
			if err := env.grpcCall("A", tok, wire.TypeEntityGetRequest, map[string]any{"entityId": side}, &er); err != nil ||
				er.Success || er.Error == nil || er.Error.Code != "CLIENT_ERROR" || !strings.HasPrefix(er.Error.Message, "TRANSACTION_NOT_FOUND: ") {
				t.Fatalf("gRPC with a committed token: %+v %v", er.Error, err)
			}

			// Failure: the owner's processor fails after its callbacks
			// wrote; their writes roll back with it.
			r := env.call("A", "POST", "/entity/JSON/order/1", []byte(`{"n":1,"note":"fail"}`))
			r.problem(t, 400, "WORKFLOW_FAILED")
			side = recv(t, sg)
			tok = recv(t, toks)
			env.call("A", "GET", "/entity/"+side, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			env.call("A", "GET", "/entity/"+side, nil, "X-Tx-Token", tok).problem(t, 404, "TRANSACTION_NOT_FOUND")
		})
	}
}

// TestJoinAnchorWrite: a processor that writes its own entity through a
// callback and also returns data: the returned data wins, in one
// revision of the owner's transaction.
func TestJoinAnchorWrite(t *testing.T) {
	t.Parallel()
	env := newJoinEnv(t, "memory", time.Minute)
	env.setupModels()
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"n":2,"note":"created"}`), nil
	})
	id, _ := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		st, b, err := env.httpCall("A", c.TxToken, "PUT", "/entity/JSON/"+id, `{"n":100,"note":"callback"}`)
		if err != nil || st != 200 {
			return nil, fmt.Errorf("callback write of the anchor: %d %s %v", st, b, err)
		}
		return json.RawMessage(`{"n":3,"note":"returned"}`), nil
	})
	var res txResult
	env.call("A", "PUT", "/entity/JSON/"+id+"/redo", []byte(`{"n":2,"note":"created"}`)).ok(t).decode(t, &res)
	o := env.get("A", "/entity/"+id)
	if string(o.Data) != `{"n":3,"note":"returned"}` || o.Meta.TransactionID != res.TransactionID {
		t.Fatalf("anchor %s in %s, want the returned data in %s", o.Data, o.Meta.TransactionID, res.TransactionID)
	}
	var changes []map[string]any
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
	if len(changes) != 2 {
		t.Fatalf("%d revisions, want create + one update: %v", len(changes), changes)
	}
}

// TestJoinCommitBeforeDispatch: startNewTxOnDispatch sends TX_post's
// token; a callback with it writes into TX_post, which commits with the
// processor's result.
func TestJoinCommitBeforeDispatch(t *testing.T) {
	t.Parallel()
	env := newJoinEnv(t, "memory", time.Minute)
	env.setupModels()
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		return nil, nil
	})
	id, entry := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
	sides := make(chan [2]string, 1)
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		_, _, claims, err := txtoken.Parse(c.TxToken)
		if err != nil {
			return nil, fmt.Errorf("no TX_post token: %q %v", c.TxToken, err)
		}
		st, b, err := env.httpCall("A", c.TxToken, "POST", "/entity/JSON/side/1", `{"k":"post"}`)
		var res []txResult
		_ = json.Unmarshal(b, &res)
		if err != nil || st != 200 || len(res) != 1 {
			return nil, fmt.Errorf("callback create: %d %s %v", st, b, err)
		}
		sides <- [2]string{res[0].EntityIDs[0], res[0].TransactionID + " " + claims.Tx}
		return nil, nil
	})
	var res txResult
	env.call("A", "PUT", "/entity/JSON/"+id+"/book", []byte(`{"n":1,"note":"x"}`)).ok(t).decode(t, &res)
	got := recv(t, sides)
	o := env.get("A", "/entity/"+id)
	post := o.Meta.TransactionID
	if o.Meta.State != "BOOKED" || post == res.TransactionID || post == entry {
		t.Fatalf("anchor %+v; answer %s", o.Meta, res.TransactionID)
	}
	if got[1] != post+" "+post {
		t.Fatalf("callback reported / token named %s, want TX_post %s", got[1], post)
	}
	if s := env.get("A", "/entity/"+got[0]); s.Meta.TransactionID != post {
		t.Fatalf("callback entity in %s, want TX_post %s", s.Meta.TransactionID, post)
	}
}

// TestJoinTokenErrors: every token error of docs/decisions/0015-transactions.md over HTTP and gRPC,
// and a token that outlives SVC_TX_TOKEN_TTL.
func TestJoinTokenErrors(t *testing.T) {
	t.Parallel()
	env := newJoinEnv(t, "memory", 3*time.Second)
	env.setupModels()
	side, _ := env.create("A", "side", 1, `{"k":"v"}`)
	live := make(chan string, 1)
	release := make(chan struct{})
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		live <- c.TxToken
		<-release
		return nil, nil
	})
	done := make(chan entityResp, 1)
	go func() {
		st, b, _ := env.httpCall("A", "", "POST", "/entity/JSON/order/1", `{"n":1,"note":"x"}`)
		done <- entityResp{status: st, body: b}
	}()
	tok := recv(t, live)
	// The last two characters of a strict 32-byte base64url signature;
	// both replacements decode, to a different signature.
	tampered := tok[:len(tok)-2] + "AA"
	if strings.HasSuffix(tok, "AA") {
		tampered = tok[:len(tok)-2] + "AQ"
	}
	p, _, _ := strings.Cut(tok, ".")
	other, _ := txtoken.NewRandom("node-1", time.Minute)
	for name, c := range map[string]struct {
		tok, code string
		status    int
	}{
		"malformed":    {"not-a-token", "UNAUTHORIZED", 401},
		"tampered sig": {tampered, "UNAUTHORIZED", 401},
		"payload only": {p, "UNAUTHORIZED", 401},
		"other secret": {other.Sign("00000000-0000-0000-0000-000000000000"), "UNAUTHORIZED", 401},
		"unknown tx":   {env.sg.Sign("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "TRANSACTION_NOT_FOUND", 404},
	} {
		env.call("A", "GET", "/entity/"+side, nil, "X-Tx-Token", c.tok).problem(t, c.status, c.code)
		var er wire.EntityResponse
		err := env.grpcCall("A", c.tok, wire.TypeEntityGetRequest, map[string]any{"entityId": side}, &er)
		if err != nil || er.Success || er.Error == nil || !strings.HasPrefix(er.Error.Message, c.code+": ") {
			t.Errorf("%s over gRPC: %+v %v", name, er.Error, err)
		}
	}
	env.call("B", "GET", "/entity/"+side, nil, "X-Tx-Token", tok).problem(t, 403, "FORBIDDEN")
	// The whole API honours the header, the stats and transitions routes
	// included.
	for _, r := range [][2]string{{"GET", "/entity/stats"}, {"GET", "/entity/" + side + "/transitions"},
		{"POST", "/entity/stats/side/1/query"}, {"GET", "/model/"}} {
		env.call("A", r[0], r[1], nil, "X-Tx-Token", "not-a-token").problem(t, 401, "UNAUTHORIZED")
	}
	// Still live: the token joins.
	env.call("A", "GET", "/entity/"+side, nil, "X-Tx-Token", tok).ok(t)
	// Past its lifetime (3 s, rounded up to the second) it is expired: the
	// signer's clock moves on instead of the test sleeping 4 s.
	env.skew.Add(int64(4100 * time.Millisecond))
	env.call("A", "GET", "/entity/"+side, nil, "X-Tx-Token", tok).problem(t, 410, "TRANSACTION_EXPIRED")
	var er wire.EntityResponse
	if err := env.grpcCall("A", tok, wire.TypeEntityGetRequest, map[string]any{"entityId": side}, &er); err != nil ||
		er.Success || er.Error == nil || !strings.HasPrefix(er.Error.Message, "TRANSACTION_EXPIRED: ") {
		t.Fatalf("expired over gRPC: %+v %v", er.Error, err)
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Fatalf("owner: %d %s", r.status, r.body)
	}
	// Absent token: unchanged behaviour.
	env.call("A", "GET", "/entity/"+side, nil).ok(t)
}

// TestJoinAsyncNewTx: an ASYNC_NEW_TX processor runs in a savepoint: the
// writes of its callbacks stay when it succeeds and are rolled back with
// the savepoint when it fails, while the transition commits either way.
func TestJoinAsyncNewTx(t *testing.T) {
	t.Parallel()
	env := newJoinEnv(t, "memory", time.Minute)
	env.setupModels()
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) { return nil, nil })
	id, _ := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
	sides := make(chan string, 1)
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		st, b, err := env.httpCall("A", c.TxToken, "POST", "/entity/JSON/side/1", `{"k":"async"}`)
		var res []txResult
		_ = json.Unmarshal(b, &res)
		if err != nil || st != 200 || len(res) != 1 {
			return nil, fmt.Errorf("callback create: %d %s %v", st, b, err)
		}
		sides <- res[0].EntityIDs[0]
		var doc map[string]any
		_ = json.Unmarshal(c.Request.Payload.Data, &doc)
		if doc["note"] == "fail" {
			return nil, errors.New("async processor fails")
		}
		return nil, nil
	})
	for _, c := range []struct {
		note string
		kept bool
	}{{"ok", true}, {"fail", false}} {
		var res txResult
		env.call("A", "PUT", "/entity/JSON/"+id+"/async", []byte(`{"n":1,"note":"`+c.note+`"}`)).ok(t).decode(t, &res)
		side := recv(t, sides)
		if o := env.get("A", "/entity/"+id); string(o.Data) != `{"n":1,"note":"`+c.note+`"}` || o.Meta.TransactionID != res.TransactionID {
			t.Fatalf("%s: owner %s in %s", c.note, o.Data, o.Meta.TransactionID)
		}
		r := env.call("A", "GET", "/entity/"+side, nil)
		if c.kept {
			var s envelope
			r.ok(t).decode(t, &s)
			if s.Meta.TransactionID != res.TransactionID {
				t.Fatalf("kept callback write in %s, want %s", s.Meta.TransactionID, res.TransactionID)
			}
		} else {
			r.problem(t, 404, "ENTITY_NOT_FOUND")
		}
	}
}

// TestJoinDeletes: deletes join too. A callback deleting a committed
// entity hides it from its own transaction while the outside still reads
// it, until the owner commits; an entity created and deleted inside the
// transaction never exists; delete all inside the transaction deletes
// what the transaction sees (nothing left here).
func TestJoinDeletes(t *testing.T) {
	t.Parallel()
	env := newJoinEnv(t, "memory", time.Minute)
	env.setupModels()
	gone, _ := env.create("A", "side", 1, `{"k":"old"}`)
	created := make(chan string, 1)
	env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		var ck checks
		tx := c.Request.TransactionID
		st, b, err := env.httpCall("A", c.TxToken, "DELETE", "/entity/"+gone, "")
		var del struct {
			TransactionID string `json:"transactionId"`
		}
		_ = json.Unmarshal(b, &del)
		ck.expect(err == nil && st == 200 && del.TransactionID == tx, "joined delete: %d %s %v", st, b, err)
		st, _, _ = env.httpCall("A", c.TxToken, "GET", "/entity/"+gone, "")
		ck.expect(st == 404, "joined read of a deleted entity: %d", st)
		st, _, _ = env.httpCall("A", "", "GET", "/entity/"+gone, "")
		ck.expect(st == 200, "standalone read before the owner commits: %d", st)
		var tr wire.TransactionResponse
		err = env.grpcCallCtx(c.CallbackContext(ctx), wire.TypeEntityCreateRequest,
			map[string]any{"dataFormat": "JSON", "payload": map[string]any{"model": map[string]any{"name": "side", "version": 1}, "data": map[string]any{"k": "tmp"}}}, &tr)
		if err != nil || !tr.Success || len(tr.TransactionInfo.EntityIDs) != 1 || tr.TransactionInfo.TransactionID != tx {
			return nil, fmt.Errorf("gRPC joined create: %+v %v", tr, err)
		}
		tmp := tr.TransactionInfo.EntityIDs[0]
		created <- tmp
		var dr wire.DeleteResponse
		err = env.grpcCallCtx(c.CallbackContext(ctx), wire.TypeEntityDeleteRequest, map[string]any{"entityId": tmp}, &dr)
		ck.expect(err == nil && dr.Success && dr.TransactionID == tx, "gRPC joined delete: %+v %v", dr, err)
		st, b, _ = env.httpCall("A", c.TxToken, "DELETE", "/entity/side/1", "")
		ck.expect(st == 200 && strings.Contains(string(b), `"numberOfEntititesRemoved":0`), "joined delete by model: %d %s", st, b)
		return nil, ck.err()
	})
	_, entry := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
	tmp := recv(t, created)
	env.call("A", "GET", "/entity/"+gone, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	var changes []map[string]any
	env.call("A", "GET", "/entity/"+gone+"/changes", nil).ok(t).decode(t, &changes)
	if len(changes) != 2 || changes[0]["changeType"] != "DELETE" {
		t.Fatalf("changes of the deleted entity %v", changes)
	}
	if tx, _ := changes[0]["transactionId"].(string); tx != "" && tx != entry {
		t.Fatalf("deleted in %s, want %s", tx, entry)
	}
	env.call("A", "GET", "/entity/"+tmp, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	env.call("A", "GET", "/entity/"+tmp+"/changes", nil).problem(t, 404, "ENTITY_NOT_FOUND")
}
