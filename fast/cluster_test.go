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
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"svc/audit"
	"svc/cluster"
	"svc/cluster/clustertest"
	"svc/cluster/peer"
	"svc/compute"
	"svc/compute/crud"
	"svc/compute/member"
	"svc/compute/pb/cloudapi"
	"svc/compute/wire"
	"svc/entity"
	"svc/internal/await"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres/pgtestdb"
	"svc/txtoken"
	"svc/workflow"
)

// clusterSecret is the nodes' shared SVC_HMAC_SECRET (raw bytes).
var clusterSecret = bytes.Repeat([]byte{0x5a}, 32)

// clusterNode is one real node: HTTP API with the internal routes and the
// transaction router, compute gRPC listener with dispatch forwarding and
// the gRPC transaction router, its own pool on the shared database, its
// own entity, model and search services. Nodes see each other through a
// clustertest.Mesh instead of gossip.
type clusterNode struct {
	*entityEnv
	id       string
	root     string // http://host:port, the node's SVC_NODE_ADDR
	grpcAddr string
	compute  *compute.Server
	tokens   *txtoken.Signer
	rpc      cloudapi.CloudEventsServiceClient
}

type clusterEnv struct {
	t     testing.TB
	mesh  *clustertest.Mesh
	nodes map[string]*clusterNode
	// proxyTimeout is SVC_PROXY_TIMEOUT of the nodes.
	proxyTimeout time.Duration
}

// newClusterEnv starts nodes ids on one PostgreSQL database; wait is
// SVC_DISPATCH_WAIT_TIMEOUT.
func newClusterEnv(t testing.TB, wait time.Duration, ids ...string) *clusterEnv {
	return newClusterEnvProxy(t, wait, 20*time.Second, ids...)
}

func newClusterEnvProxy(t testing.TB, wait, proxy time.Duration, ids ...string) *clusterEnv {
	t.Helper()
	url := pgtest.New(t, "fastcluster")
	env := &clusterEnv{t: t, mesh: clustertest.NewMesh(), nodes: map[string]*clusterNode{}, proxyTimeout: proxy}
	for _, id := range ids {
		env.nodes[id] = env.start(id, url, wait)
	}
	return env
}

func (e *clusterEnv) start(id, url string, wait time.Duration) *clusterNode {
	t := e.t
	db := pgtestdb.Open(t, url, 6, time.Minute)
	ms, es, as, sr := db.Models(), db.Entities(), db.Audits(), db.Search(time.Minute)
	log := slog.New(slog.DiscardHandler)
	view := e.mesh.View(id)
	tokens := txtoken.New(clusterSecret, id, time.Minute)
	key, err := peer.NewKey(clusterSecret)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	txr := crud.NewTxRouter(crud.TxRouterConfig{Dir: view, Tokens: tokens, Timeout: e.proxyTimeout, AllowLoopback: true})
	t.Cleanup(txr.Close)
	pc := peer.NewClient(key, peer.ClientOptions{Timeout: 20 * time.Second, AllowLoopback: true})
	csrv := compute.New(compute.Config{DispatchWaitTimeout: wait, ServerOptions: txr.ServerOptions(), Cluster: view,
		Forward: func(ctx context.Context, n cluster.Node, path string, body []byte) ([]byte, error) {
			return pc.Call(ctx, n.HTTPAddr, path, body)
		}}, memberTokens{}, log)
	csrv.OnTagsChanged(func(tenant string, tags []string) { e.mesh.SetTags(id, tenant, tags) })
	mux := peer.NewMux(peer.NewGuard(key))
	mux.Handle(compute.CalloutPath, csrv.ServeCallout)

	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: csrv, Log: log}
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	ssvc.SetDispatcher(csrv)
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)),
		entity.WithConditions(ssvc), entity.WithTxTokens(tokens))
	msvc.SetEntityCounter(esvc)
	csrv.Start(lis, crud.New(crud.Services{Entities: esvc, Models: msvc, Search: ssvc}, memberTokens{}, log))
	t.Cleanup(csrv.Stop)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Audit: audit.New(as, es), Search: ssvc,
		Cluster: &ClusterDeps{Dir: view, Tokens: tokens, Internal: mux, ProxyTimeout: e.proxyTimeout, AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	root := strings.TrimSuffix(base, cfg.ContextPath)
	e.mesh.SetAddrs(id, root, lis.Addr().String())
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &clusterNode{entityEnv: &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc},
		id: id, root: root, grpcAddr: lis.Addr().String(), compute: csrv, tokens: tokens, rpc: cloudapi.NewCloudEventsServiceClient(conn)}
}

// member connects a compute member of tenant to node n; the mesh shows
// its tags on n once it has joined.
func (e *clusterEnv) member(n *clusterNode, tenant string, h member.Handlers, tags ...string) *member.Member {
	e.t.Helper()
	m, err := member.Connect(context.Background(), member.Config{Endpoint: n.grpcAddr, Token: "m2m-" + tenant, Tags: tags,
		Log: slog.New(slog.DiscardHandler)}, h)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { m.Close() })
	return m
}

// workflows imports a workflow document through node n.
func (n *clusterNode) workflows(tenant, name string, version int, body string) {
	n.t.Helper()
	n.call(tenant, "POST", fmt.Sprintf("/model/%s/%d/workflow/import", name, version), []byte(body)).ok(n.t)
}

// httpCall is a callback over HTTP, safe off the test goroutine.
func (n *clusterNode) httpCall(tenant, tok, method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("X-Tx-Token", tok)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// grpcCall is a callback over n's gRPC CRUD RPCs as tenant's member.
func (n *clusterNode) grpcCall(tenant, tok, typ string, req any, out any) error {
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
	rev, err := n.rpc.EntityManage(ctx, ev)
	if err != nil {
		return err
	}
	return wire.Decode(rev, out)
}

const clusterWorkflow = `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false,
    "criterion":{"type":"function","function":{"name":"ready","config":{"calculationNodesTags":"far","responseTimeoutMs":2000}}},
    "processors":[{"name":"p","executionMode":"SYNC","config":{"calculationNodesTags":"far","responseTimeoutMs":3000}}]}]},
  "DONE":{}}}]}`

// TestClusterMemberOnAServesWorkflowOnB: a member connected to node A
// serves the criterion and processor of a workflow started through node
// B. B has no member; it finds A's tags in membership and forwards both
// calls over the internal route; the member gets them with B's routing
// token and the caller's attributes, and B commits its answer.
func TestClusterMemberOnAServesWorkflowOnB(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, 5*time.Second, "A", "B")
	a, b := env.nodes["A"], env.nodes["B"]
	b.lockedModel("T", "order", 1, `{"n":1}`)
	b.workflows("T", "order", 1, clusterWorkflow)
	seen := make(chan *member.Call, 4)
	env.member(a, "T", member.Handlers{
		Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
			seen <- c
			return true, "", nil
		},
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			seen <- c
			return json.RawMessage(`{"n":2,"by":"member on A"}`), nil
		}}, "far")
	if b.compute.Members("T") != 0 || a.compute.Members("T") != 1 {
		t.Fatalf("members: A %d, B %d", a.compute.Members("T"), b.compute.Members("T"))
	}
	id, tx := b.create("T", "order", 1, `{"n":1}`)
	crit, proc := recv(t, seen), recv(t, seen)
	if crit.Type != wire.TypeCriteriaRequest || proc.Type != wire.TypeProcessorRequest {
		t.Fatalf("member got %s then %s", crit.Type, proc.Type)
	}
	for _, c := range []*member.Call{crit, proc} {
		_, _, claims, err := txtoken.Parse(c.TxToken)
		if err != nil || claims.Node != "B" || claims.Tx != tx {
			t.Fatalf("%s token %q names %+v, want B's transaction %s (%v)", c.Type, c.TxToken, claims, tx, err)
		}
		if c.AuthType != "user" || c.AuthID != "u-T" || c.Request.EntityID != id || c.Request.TransactionID != tx {
			t.Fatalf("%s attributes %s/%s, request %+v", c.Type, c.AuthType, c.AuthID, c.Request)
		}
	}
	for _, n := range []*clusterNode{a, b} {
		if got := n.get("T", "/entity/"+id); got.Meta.State != "DONE" || string(got.Data) != `{"n":2,"by":"member on A"}` {
			t.Fatalf("read on %s: %s %s", n.id, got.Meta.State, got.Data)
		}
	}
}

// TestClusterCallbackJoinsOwnerThroughAnotherNode: the member on A calls
// back to node C, over HTTP and over gRPC, with the token of B's
// transaction. C proxies both to B, where they join the transaction: the
// writes commit with B's, under B's transaction id, and when B's
// processor fails afterwards they are gone with it.
func TestClusterCallbackJoinsOwnerThroughAnotherNode(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, 5*time.Second, "A", "B", "C")
	a, b, c := env.nodes["A"], env.nodes["B"], env.nodes["C"]
	b.lockedModel("T", "order", 1, `{"n":1,"fail":false}`)
	b.lockedModel("T", "side", 1, `{"k":"v"}`)
	b.workflows("T", "order", 1, clusterWorkflow)
	sides := make(chan string, 2)
	env.member(a, "T", member.Handlers{
		Criteria: func(ctx context.Context, call *member.Call) (bool, string, error) { return true, "", nil },
		Processor: func(ctx context.Context, call *member.Call) (json.RawMessage, error) {
			tx := call.Request.TransactionID
			st, body, err := c.httpCall("T", call.TxToken, "POST", "/entity/JSON/side/1", `{"k":"http via C"}`)
			var res []txResult
			_ = json.Unmarshal(body, &res)
			if err != nil || st != 200 || len(res) != 1 || len(res[0].EntityIDs) != 1 || res[0].TransactionID != tx {
				return nil, fmt.Errorf("HTTP callback through C: %d %s %v", st, body, err)
			}
			side := res[0].EntityIDs[0]
			sides <- side
			// The joined read through C sees the uncommitted write; a
			// standalone read on C does not.
			if st, body, _ := c.httpCall("T", call.TxToken, "GET", "/entity/"+side, ""); st != 200 || !strings.Contains(string(body), "http via C") {
				return nil, fmt.Errorf("joined read through C: %d %s", st, body)
			}
			if st, _, _ := c.httpCall("T", "", "GET", "/entity/"+side, ""); st != 404 {
				return nil, fmt.Errorf("standalone read on C saw an uncommitted write: %d", st)
			}
			var tr wire.TransactionResponse
			err = c.grpcCall("T", call.TxToken, wire.TypeEntityUpdateRequest,
				map[string]any{"dataFormat": "JSON", "payload": map[string]any{"entityId": side, "data": map[string]any{"k": "grpc via C"}}}, &tr)
			if err != nil || !tr.Success || tr.TransactionInfo.TransactionID != tx {
				return nil, fmt.Errorf("gRPC callback through C: %+v %v", tr, err)
			}
			var doc map[string]any
			_ = json.Unmarshal(call.Request.Payload.Data, &doc)
			if doc["fail"] == true {
				return nil, errors.New("owner's processor fails after its callbacks wrote")
			}
			return json.RawMessage(`{"n":2}`), nil
		}}, "far")

	id, tx := b.create("T", "order", 1, `{"n":1}`)
	side := recv(t, sides)
	s := c.get("T", "/entity/"+side)
	if string(s.Data) != `{"k":"grpc via C"}` || s.Meta.TransactionID != tx {
		t.Fatalf("callback entity %s in %s, want the gRPC write in B's %s", s.Data, s.Meta.TransactionID, tx)
	}
	if o := a.get("T", "/entity/"+id); o.Meta.State != "DONE" || o.Meta.TransactionID != tx {
		t.Fatalf("owner entity %+v", o.Meta)
	}

	// All or nothing: the owner fails after the callbacks wrote through C.
	b.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1,"fail":true}`)).problem(t, 400, "WORKFLOW_FAILED")
	side = recv(t, sides)
	for _, n := range []*clusterNode{a, b, c} {
		n.call("T", "GET", "/entity/"+side, nil).problem(t, 404, "ENTITY_NOT_FOUND")
	}
}

// TestClusterDispatchErrors: no member anywhere is 503
// NO_COMPUTE_MEMBER_FOR_TAG after the wait; a peer that advertises the
// tag but cannot be reached is 503 DISPATCH_FORWARD_FAILED; a typed
// error met on the peer (its member did not answer in time) comes back
// with its code and status; a member that joins a peer during the wait
// is used.
func TestClusterDispatchErrors(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, 1500*time.Millisecond, "A", "B")
	a, b := env.nodes["A"], env.nodes["B"]
	b.lockedModel("T", "order", 1, `{"n":1}`)
	b.workflows("T", "order", 1, clusterWorkflow)

	start := time.Now()
	p := b.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1}`)).problem(t, 503, "NO_COMPUTE_MEMBER_FOR_TAG")
	if time.Since(start) < 1500*time.Millisecond || p["retryable"] != true {
		t.Fatalf("answered after %v (want the wait), properties %v", time.Since(start), p)
	}

	// A dead peer advertising the tag.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := "http://" + dead.Addr().String()
	dead.Close()
	env.mesh.Put(cluster.Node{ID: "Z", HTTPAddr: deadAddr, Tags: map[string][]string{"T": {"far"}}})
	p = b.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1}`)).problem(t, 503, "DISPATCH_FORWARD_FAILED")
	if p["retryable"] != true {
		t.Fatalf("DISPATCH_FORWARD_FAILED not retryable: %v", p)
	}
	env.mesh.Remove("Z")

	// A member on A that never answers: A's DISPATCH_TIMEOUT comes back.
	release := make(chan struct{})
	defer close(release)
	slow := env.member(a, "T", member.Handlers{
		Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return false, "", nil
		}}, "far")
	p = b.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1}`)).problem(t, 503, "DISPATCH_TIMEOUT")
	if p["retryable"] != true {
		t.Fatalf("DISPATCH_TIMEOUT not retryable after the hop: %v", p)
	}
	slow.Close()
	await.Until(t, await.Long, func() bool { n, _ := env.mesh.View("B").Lookup("A"); return len(n.Tags["T"]) == 0 }, "A's tags gone from B's view")

	// A member that joins A while B waits is found by the poll.
	got := make(chan struct{}, 2)
	done := make(chan entityResp, 1)
	go func() { done <- b.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1}`)) }()
	// A real sleep: B's dispatch waiting for a member is not observable
	// from here; joining too early would only skip the poll, never fail.
	time.Sleep(300 * time.Millisecond)
	env.member(a, "T", member.Handlers{
		Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
			got <- struct{}{}
			return true, "", nil
		},
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			got <- struct{}{}
			return nil, nil
		}}, "far")
	r := <-done
	r.ok(t)
}

// TestClusterTxRoutingErrors: the router's answers before any proxying:
// an expired token 410, a forged or malformed one 401, a token whose
// owner is not live 503 TRANSACTION_NODE_UNAVAILABLE (HTTP and gRPC).
func TestClusterTxRoutingErrors(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, time.Second, "A", "B")
	a := env.nodes["A"]
	a.lockedModel("T", "side", 1, `{"k":"v"}`)
	id, _ := a.create("T", "side", 1, `{"k":"v"}`)
	past := txtoken.New(clusterSecret, "B", time.Second).WithClock(func() time.Time { return time.Now().Add(-time.Hour) })
	other := txtoken.New(bytes.Repeat([]byte{1}, 32), "B", time.Minute)
	gone := txtoken.New(clusterSecret, "Z", time.Minute)
	for name, c := range map[string]struct {
		tok    string
		status int
		code   string
	}{
		"expired":      {past.Sign("00000000-0000-0000-0000-000000000001"), 410, "TRANSACTION_EXPIRED"},
		"other secret": {other.Sign("00000000-0000-0000-0000-000000000001"), 401, "UNAUTHORIZED"},
		"malformed":    {"not-a-token", 401, "UNAUTHORIZED"},
		"owner gone":   {gone.Sign("00000000-0000-0000-0000-000000000001"), 503, "TRANSACTION_NODE_UNAVAILABLE"},
	} {
		t.Run(name, func(t *testing.T) {
			a.with(t).call("T", "GET", "/entity/"+id, nil, "X-Tx-Token", c.tok).problem(t, c.status, c.code)
		})
	}
	var er wire.EntityResponse
	err := a.grpcCall("T", gone.Sign("00000000-0000-0000-0000-000000000001"), wire.TypeEntityGetRequest, map[string]any{"entityId": id}, &er)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "TRANSACTION_NODE_UNAVAILABLE") {
		t.Fatalf("gRPC with a gone owner: %v", err)
	}
	// A live owner that does not know the transaction answers for itself.
	known := env.nodes["B"].tokens.Sign("00000000-0000-0000-0000-000000000001")
	a.call("T", "GET", "/entity/"+id, nil, "X-Tx-Token", known).problem(t, 404, "TRANSACTION_NOT_FOUND")
}

// TestClusterInternalRouteRefusesForgedCalls: a call to the internal
// route that is not sealed with the cluster key, or that replays a
// genuine call, gets 403 and reaches no member; the genuine call itself
// is served once.
func TestClusterInternalRouteRefusesForgedCalls(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, time.Second, "A")
	a := env.nodes["A"]
	var calls atomic.Int32
	env.member(a, "T", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`{"ok":true}`), nil
	}}, "far")
	callout := []byte(`{"type":"` + wire.TypeProcessorRequest + `","what":"processor p","tenant":"T","authKind":"user","authId":"u",` +
		`"tags":["far"],"tagsCsv":"far","timeoutMs":5000,"request":{"entityId":"00000000-0000-0000-0000-000000000001",` +
		`"processorId":"p","processorName":"p","workflow":{"id":"w","name":"w"},"transition":{"id":"t","name":"t"},"success":true}}`)
	post := func(key *peer.Key, ts int64, body []byte, ctype string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", a.root+compute.CalloutPath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set(peer.HeaderTimestamp, strconv.FormatInt(ts, 10))
		resp, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	good, _ := peer.NewKey(clusterSecret)
	forged, _ := peer.NewKey(bytes.Repeat([]byte{0x33}, 32))
	now := time.Now().Unix()
	for name, c := range map[string]struct {
		key   *peer.Key
		ts    int64
		body  []byte
		ctype string
	}{
		"another secret": {forged, now, forged.Seal("POST", compute.CalloutPath, now, callout), peer.ContentType},
		"plaintext":      {good, now, callout, peer.ContentType},
		"plain JSON":     {good, now, callout, "application/json"},
		"stale":          {good, now - 120, good.Seal("POST", compute.CalloutPath, now-120, callout), peer.ContentType},
	} {
		if st, b := post(c.key, c.ts, c.body, c.ctype); st != 403 || problemCode(b) != "FORBIDDEN" {
			t.Fatalf("%s: %d %s", name, st, b)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("refused calls reached the member %d times", n)
	}
	body := good.Seal("POST", compute.CalloutPath, now, callout)
	st, resp := post(good, now, body, peer.ContentType)
	if st != 200 {
		t.Fatalf("genuine call: %d %s", st, resp)
	}
	plain, err := good.OpenResponse("POST", compute.CalloutPath, now, peer.Nonce(body), resp)
	if err != nil || !strings.Contains(string(plain), `"ok":true`) {
		t.Fatalf("genuine answer %s %v", plain, err)
	}
	if st, b := post(good, now, body, peer.ContentType); st != 403 || problemCode(b) != "FORBIDDEN" {
		t.Fatalf("replay: %d %s", st, b)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("member served %d calls, want the genuine one only", n)
	}
}

// TestInternalRoutesOnlyInClusterMode: with clustering off the internal
// route does not exist and X-Tx-Token is not routed.
func TestInternalRoutesOnlyInClusterMode(t *testing.T) {
	t.Parallel()
	env := newEntityEnv(t, "memory")
	root := strings.TrimSuffix(env.base, config.Defaults().ContextPath)
	resp, err := env.client.Post(root+compute.CalloutPath, peer.ContentType, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("internal route with clustering off: %d", resp.StatusCode)
	}
}

// TestClusterSearchFunctionConditionForwarded: a direct search through
// node B whose condition has a function leaf is decided by the member on
// node A, one forwarded criteria call per candidate.
func TestClusterSearchFunctionConditionForwarded(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, 5*time.Second, "A", "B")
	a, b := env.nodes["A"], env.nodes["B"]
	b.lockedModel("T", "fn", 1, `{"n":1}`)
	for n := 0; n < 6; n++ {
		b.create("T", "fn", 1, fmt.Sprintf(`{"n":%d}`, n))
	}
	var calls atomic.Int32
	env.member(a, "T", member.Handlers{Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
		calls.Add(1)
		var doc struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(c.Request.Payload.Data, &doc)
		return doc.N%2 == 0, "", nil
	}}, "calc")
	cond := `{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"calc","responseTimeoutMs":20000}}}`
	r := b.call("T", "POST", "/search/direct/fn/1", []byte(cond)).ok(t)
	if got := bytes.Count(r.body, []byte(`"meta"`)); got != 3 {
		t.Fatalf("%d results, want the 3 even ones: %s", got, r.body)
	}
	if calls.Load() != 6 {
		t.Fatalf("member decided %d candidates, want 6", calls.Load())
	}
}

// TestClusterGRPCCollectionRoutedToOwner: a streaming gRPC CRUD call
// (entitySearchCollection) carrying another node's tx-token is relayed
// to the owner and its events come back in order.
func TestClusterGRPCCollectionRoutedToOwner(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, 5*time.Second, "A", "B", "C")
	a, b, c := env.nodes["A"], env.nodes["B"], env.nodes["C"]
	b.lockedModel("T", "order", 1, `{"n":1,"fail":false}`)
	b.lockedModel("T", "side", 1, `{"k":"v"}`)
	b.workflows("T", "order", 1, clusterWorkflow)
	for i := 0; i < 3; i++ {
		b.create("T", "side", 1, fmt.Sprintf(`{"k":"committed %d"}`, i))
	}
	found := make(chan int, 1)
	env.member(a, "T", member.Handlers{
		Criteria: func(ctx context.Context, call *member.Call) (bool, string, error) { return true, "", nil },
		Processor: func(_ context.Context, call *member.Call) (json.RawMessage, error) {
			// An uncommitted side entity of the transaction, through C.
			if st, body, err := c.httpCall("T", call.TxToken, "POST", "/entity/JSON/side/1", `{"k":"pending"}`); err != nil || st != 200 {
				return nil, fmt.Errorf("callback: %d %s %v", st, body, err)
			}
			ev, err := wire.New("urn:test", wire.TypeEntityGetAllRequest, map[string]any{"model": map[string]any{"name": "side", "version": 1}, "pageSize": 100})
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(),
				"authorization", "Bearer m2m-T", "tx-token", call.TxToken), 20*time.Second)
			defer cancel()
			st, err := c.rpc.EntitySearchCollection(ctx, ev)
			if err != nil {
				return nil, err
			}
			n := 0
			for {
				if _, err := st.Recv(); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return nil, err
				}
				n++
			}
			found <- n
			return nil, nil
		}}, "far")
	b.create("T", "order", 1, `{"n":1}`)
	if n := recv(t, found); n != 4 {
		t.Fatalf("the joined stream through C returned %d entities, want 3 committed + 1 pending", n)
	}
}

// TestClusterProxyTimeout: an owner that does not answer within
// SVC_PROXY_TIMEOUT gives 503 TRANSACTION_NODE_UNAVAILABLE.
func TestClusterProxyTimeout(t *testing.T) {
	t.Parallel()
	env := newClusterEnvProxy(t, time.Second, 300*time.Millisecond, "A")
	a := env.nodes["A"]
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			conn, err := hang.Accept()
			if err != nil {
				return
			}
			accepted <- conn // held open, never answered
		}
	}()
	defer func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()
	env.mesh.Put(cluster.Node{ID: "H", HTTPAddr: "http://" + hang.Addr().String()})
	tok := txtoken.New(clusterSecret, "H", time.Minute).Sign("00000000-0000-0000-0000-000000000001")
	p := a.call("T", "GET", "/entity/00000000-0000-0000-0000-000000000009", nil, "X-Tx-Token", tok).problem(t, 503, "TRANSACTION_NODE_UNAVAILABLE")
	if p["nodeId"] != "H" {
		t.Fatalf("properties %v", p)
	}
}
