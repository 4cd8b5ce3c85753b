package compute

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/compute/member"
	"svc/compute/wire"
	"svc/iam"
	"svc/internal/await"
	"svc/platform/apierr"
	"svc/workflow"
)

var noHandlers = member.Handlers{}

// seen records the calls a member received.
type seen struct {
	mu    sync.Mutex
	calls []*member.Call
}

func (s *seen) add(c *member.Call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *seen) last() *member.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[len(s.calls)-1]
}

func procSet(t *testing.T, mode, config string) *workflow.Set {
	t.Helper()
	body := `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"wf","initialState":"A","states":{
	  "A":{"transitions":[{"name":"go","next":"B","manual":false,"processors":[{"name":"enrich","executionMode":"` + mode + `","config":` + config + `}]}]},
	  "B":{"transitions":[{"name":"check","next":"C","manual":true,"criterion":{"type":"function","function":{"name":"isOk","config":{"calculationNodesTags":"calc","context":"crit-ctx"}}}}]},
	  "C":{}}}]}`
	req, err := workflow.ParseImport([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := workflow.Import(nil, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.CompileStored(res.Stored)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func run(tenant, data string) *workflow.Run {
	return &workflow.Run{Tenant: tenant, Auth: workflow.Auth{Kind: "user", ID: "u1", Roles: []string{"ROLE_USER", "ROLE_ADMIN"}},
		Entity:        &workflow.Entity{Meta: workflow.Meta{ID: "e-1", ModelName: "orders", ModelVersion: 2, CreationDate: time.Unix(1700000000, 0)}, Data: []byte(data)},
		TransactionID: "tx-1", TxToken: "tok-1"}
}

func wantAPI(t *testing.T, err error, code, contains string, retryable bool) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Code.String() != code || !strings.Contains(e.Message, contains) || e.Retryable != retryable {
		t.Fatalf("got %v, want %s %q retryable=%v", err, code, contains, retryable)
	}
}

func TestSyncProcessorAndCriteriaOverGRPC(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	var got seen
	connect(t, addr, "m2m-t1", member.Handlers{
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			got.add(c)
			return json.RawMessage(`{"n":2,"by":"member"}`), nil
		},
		Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
			got.add(c)
			return false, "amount too high", nil
		},
	}, "calc", "other")
	e := &workflow.Engine{Dispatcher: s}
	r := run("t1", `{"n":1}`)
	out, err := e.Create(context.Background(), procSet(t, "SYNC", `{"calculationNodesTags":"nope, calc","context":"p-ctx"}`), r)
	if err != nil {
		t.Fatal(err)
	}
	if out.State != "B" || string(r.Entity.Data) != `{"n":2,"by":"member"}` {
		t.Fatalf("state %s data %s", out.State, r.Entity.Data)
	}
	c := got.last()
	q := c.Request
	if c.Type != wire.TypeProcessorRequest || q.ProcessorName != "enrich" || q.ProcessorID != "enrich" ||
		q.Workflow.Name != "wf" || q.Transition.Name != "go" || q.Transition.StateFrom != "A" || q.Transition.StateTo != "B" ||
		q.Parameters != "p-ctx" || q.TransactionID != "tx-1" || q.EntityID != "e-1" || q.RequestID == "" || q.ID != q.RequestID {
		t.Fatalf("request %+v", q)
	}
	if q.Payload == nil || string(q.Payload.Data) != `{"n":1}` || q.Payload.Meta.ModelKey != (wire.ModelKey{Name: "orders", Version: 2}) ||
		q.Payload.Meta.State != "A" || q.Payload.Meta.CreationDate != "2023-11-14T22:13:20Z" {
		t.Fatalf("payload %+v", q.Payload)
	}
	if c.AuthType != "user" || c.AuthID != "u1" || c.AuthClaims != "ROLE_USER,ROLE_ADMIN" || c.TxToken != "tok-1" {
		t.Fatalf("attributes %+v", c)
	}

	// A function criterion on a manual transition: not matched, with reason.
	_, err = e.Transition(context.Background(), procSet(t, "SYNC", `{}`), r, "check")
	wantAPI(t, err, apierr.WorkflowFailed.String(), `transition "check" criterion not matched: amount too high`, false)
	c = got.last()
	if c.Type != wire.TypeCriteriaRequest || c.Request.CriteriaName != "isOk" || c.Request.Target != "TRANSITION" || c.Request.Parameters != "crit-ctx" {
		t.Fatalf("criteria request %+v", c.Request)
	}
}

func TestProcessorFailureModesOverGRPC(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	release := make(chan struct{})
	connect(t, addr, "m2m-t1", member.Handlers{
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			switch c.Request.Parameters {
			case "fail":
				return nil, errors.New("invoice rejected")
			case "slow":
				select {
				case <-release:
				case <-ctx.Done():
				}
				return json.RawMessage(`{"late":true}`), nil
			}
			return json.RawMessage(`{"ok":true}`), nil
		},
	}, "calc")
	e := &workflow.Engine{Dispatcher: s}
	ctx := context.Background()

	r := run("t1", `{"n":1}`)
	_, err := e.Create(ctx, procSet(t, "SYNC", `{"calculationNodesTags":"calc","context":"fail"}`), r)
	wantAPI(t, err, apierr.WorkflowFailed.String(), "processor enrich failed: processor dispatch failed: invoice rejected", false)
	if r.Entity.Meta.State != "A" || string(r.Entity.Data) != `{"n":1}` {
		t.Fatal("entity changed by a failed SYNC processor")
	}

	// ASYNC_NEW_TX: failure does not stop the transition.
	r = run("t1", `{"n":1}`)
	out, err := e.Create(ctx, procSet(t, "ASYNC_NEW_TX", `{"calculationNodesTags":"calc","context":"fail"}`), r)
	if err != nil || out.State != "B" || string(r.Entity.Data) != `{"n":1}` {
		t.Fatalf("ASYNC_NEW_TX: %v %s %s", err, out.State, r.Entity.Data)
	}

	// Timeout, and the late response is dropped.
	r = run("t1", `{"n":1}`)
	_, err = e.Create(ctx, procSet(t, "SYNC", `{"calculationNodesTags":"calc","context":"slow","responseTimeoutMs":100}`), r)
	wantAPI(t, err, apierr.DispatchTimeout.String(), "within 100 ms", true)
	close(release)

	// No member for the tag, at once with no dispatch wait.
	r = run("t1", `{"n":1}`)
	_, err = e.Create(ctx, procSet(t, "SYNC", `{"calculationNodesTags":"gpu"}`), r)
	wantAPI(t, err, apierr.NoComputeMemberForTag.String(), `tags "gpu"`, true)
	// Tenant isolation: t2 has no member even for an empty tag list.
	_, err = e.Create(ctx, procSet(t, "SYNC", `{}`), run("t2", `{}`))
	wantAPI(t, err, apierr.NoComputeMemberForTag.String(), "", true)
	// An unknown principal kind is not dispatched.
	r = run("t1", `{}`)
	r.Auth.Kind = ""
	_, err = e.Create(ctx, procSet(t, "SYNC", `{}`), r)
	wantAPI(t, err, apierr.ServerError.String(), "principal kind", false)
}

func TestMemberLossDuringCall(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	entered := make(chan struct{})
	m := connect(t, addr, "m2m-t1", member.Handlers{
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}, "calc")
	go func() {
		<-entered
		m.Close()
	}()
	_, err := (&workflow.Engine{Dispatcher: s}).Create(context.Background(),
		procSet(t, "SYNC", `{"calculationNodesTags":"calc","responseTimeoutMs":10000}`), run("t1", `{}`))
	wantAPI(t, err, apierr.ComputeMemberDisconnected.String(), "compute member disconnected", true)
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 0 }, "member count")
}

func TestDispatchWaitsForMember(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{DispatchWaitTimeout: 5 * time.Second})
	waiting := make(chan struct{})
	s.testWaiting = func() { close(waiting) }
	done := make(chan error, 1)
	go func() {
		_, err := (&workflow.Engine{Dispatcher: s}).Create(context.Background(),
			procSet(t, "SYNC", `{"calculationNodesTags":"late"}`), run("t1", `{}`))
		done <- err
	}()
	<-waiting // the dispatch found no member and waits
	connect(t, addr, "m2m-t1", member.Handlers{Processor: func(context.Context, *member.Call) (json.RawMessage, error) {
		return nil, nil
	}}, "late")
	if err := <-done; err != nil {
		t.Fatalf("dispatch did not wait for the joining member: %v", err)
	}
}

func TestEvictedMemberIsNotDispatched(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{KeepaliveInterval: 30 * time.Millisecond, KeepaliveTimeout: 100 * time.Millisecond})
	st, _ := rawStream(t, addr, "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"id":"s","tags":["calc"]}`))
	if _, err := recvUntilError(st); err == nil {
		t.Fatal("silent member not evicted")
	}
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 0 }, "member count")
	_, err := (&workflow.Engine{Dispatcher: s}).Create(context.Background(),
		procSet(t, "SYNC", `{"calculationNodesTags":"calc"}`), run("t1", `{}`))
	wantAPI(t, err, apierr.NoComputeMemberForTag.String(), "", true)
}

// TestRawResponses checks the response parsing rules with a hand-written
// member: a missing success fails, a missing matches is no match, extra
// fields are ignored, responses for unknown requests are dropped.
func TestRawResponses(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	st, _ := rawStream(t, addr, "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"tags":["raw"]}`))
	if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatal(err)
	}
	replies := []string{
		`{"requestId":"%s","owner":"PLAY","payload":{"type":"TREE","data":{"x":1}}}`,                   // no success
		`{"requestId":"%s","success":true,"payload":{"type":"TREE","data":{"x":2},"meta":{"id":"e"}}}`, // extras
		`{"requestId":"%s","success":true,"matches":null}`,                                             // criteria
	}
	go func() {
		_ = st.Send(textEvent(wire.TypeProcessorResponse, `{"requestId":"unknown","success":true}`))
		for _, r := range replies {
			ev, err := st.Recv()
			if err != nil {
				return
			}
			var q wire.Request
			_ = wire.Decode(ev, &q)
			_ = st.Send(textEvent(strings.Replace(ev.GetType(), "Request", "Response", 1), strings.Replace(r, "%s", q.RequestID, 1)))
		}
	}()
	call := workflow.Call{Tenant: "t1", Auth: workflow.Auth{Kind: "system", ID: "system"}, Tags: []string{"raw"}, Timeout: 5 * time.Second}
	ctx := context.Background()
	res, err := s.DispatchProcessor(ctx, &workflow.ProcessorCall{Call: call, Processor: "p"})
	if err != nil || res.Success {
		t.Fatalf("missing success: %v %+v", err, res)
	}
	res, err = s.DispatchProcessor(ctx, &workflow.ProcessorCall{Call: call, Processor: "p"})
	if err != nil || !res.Success || string(res.Data) != `{"x":2}` {
		t.Fatalf("extras: %v %+v", err, res)
	}
	cr, err := s.DispatchCriteria(ctx, &workflow.CriteriaCall{Call: call, Criteria: "c", Target: "WORKFLOW"})
	if err != nil || !cr.Success || cr.Matches {
		t.Fatalf("matches null: %v %+v", err, cr)
	}
}

func TestStopFailsPendingCalls(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{}, testTokens, slog.New(slog.DiscardHandler))
	s.Start(lis, nil)
	entered := make(chan struct{})
	connect(t, lis.Addr().String(), "m2m-t1", member.Handlers{
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}, "calc")
	go func() {
		<-entered
		s.Stop()
	}()
	_, err = (&workflow.Engine{Dispatcher: s}).Create(context.Background(),
		procSet(t, "SYNC", `{"calculationNodesTags":"calc"}`), run("t1", `{}`))
	wantAPI(t, err, apierr.ComputeMemberDisconnected.String(), "", true)
	s.Stop() // idempotent
}

func TestScheduleFunctionOverGRPC(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	connect(t, addr, "m2m-t1", member.Handlers{
		Function: func(ctx context.Context, c *member.Call) (string, json.RawMessage, error) {
			if c.Request.FunctionName != "fire-at" || c.Request.Transition.Name != "expire" {
				return "", nil, errors.New("unexpected request")
			}
			return "Schedule", json.RawMessage(`{"fireAfterMs":60000,"expireAfterMs":500}`), nil
		},
	}, "sched")
	res, err := s.DispatchFunction(context.Background(), &workflow.FunctionCall{Function: "fire-at", Call: workflow.Call{
		Tenant: "t1", Auth: workflow.Auth{Kind: "system", ID: "system"}, Tags: []string{"sched"}, Transition: "expire", Timeout: 5 * time.Second}})
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res)
	}
	armed := time.UnixMilli(0)
	a, err := workflow.ResolveFunctionArming("fire-at", res, armed)
	if err != nil || a.FireAt.UnixMilli() != 60000 || a.TimeoutMs == nil || *a.TimeoutMs != 500 {
		t.Fatalf("%v %+v", err, a)
	}
}

// TestWriteStallEvicts: a member that keeps sending keep-alives but stops
// reading is evicted once a send has been stuck for the keep-alive timeout,
// and the calls queued to it fail as disconnected.
func TestWriteStallEvicts(t *testing.T) {
	t.Parallel()
	// The timeout leaves room for the keep-alive sender to be starved by
	// the race detector on a loaded machine: only the stall may evict.
	s, addr := startServer(t, Config{KeepaliveInterval: 100 * time.Millisecond, KeepaliveTimeout: 3 * time.Second})
	st, _ := rawStream(t, addr, "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"id":"j","tags":["big"]}`))
	if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // alive, but never reads again
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if st.Send(textEvent(wire.TypeKeepAlive, `{"id":"k"}`)) != nil {
					return
				}
			case <-stop:
				return
			}
		}
	}()
	big := []byte(`{"blob":"` + strings.Repeat("x", 1<<20) + `"}`)
	errs := make(chan error, 8)
	for i := 0; i < cap(errs); i++ {
		go func() {
			_, err := s.DispatchProcessor(context.Background(), &workflow.ProcessorCall{Processor: "p", Call: workflow.Call{
				Tenant: "t1", Auth: workflow.Auth{Kind: "system", ID: "system"}, Tags: []string{"big"}, Data: big, Timeout: time.Minute}})
			errs <- err
		}()
	}
	disconnected := 0
	for i := 0; i < cap(errs); i++ {
		// Calls that reach routing after the eviction find no member.
		e, ok := apierr.As(<-errs)
		if !ok || (e.Code != apierr.ComputeMemberDisconnected && e.Code.String() != apierr.NoComputeMemberForTag.String()) {
			t.Fatalf("got %v", e)
		}
		if e.Code == apierr.ComputeMemberDisconnected {
			disconnected++
		}
	}
	if disconnected == 0 {
		t.Fatal("no call was pending on the stalled member")
	}
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 0 }, "member count")
	_, err := recvUntilError(st)
	if s, _ := status.FromError(err); s.Code() != codes.DeadlineExceeded || !strings.Contains(s.Message(), "send stalled") {
		t.Fatalf("stream ended with %v", err)
	}
}

// TestRequestWireShape checks the raw JSON a member receives against the
// field names of docs/decisions/0019-compute-members.md, independently of the wire structs.
func TestRequestWireShape(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	st, _ := rawStream(t, addr, "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"tags":["raw"]}`))
	greet, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	_ = json.Unmarshal([]byte(greet.GetTextData()), &g)
	if len(g) != 4 || g["id"] != g["memberId"] || g["joinedLegalEntityId"] != "t1" || g["success"] != true {
		t.Fatalf("greet %s", greet.GetTextData())
	}
	type got struct {
		text  string
		id    string
		attrs map[string]string
	}
	events := make(chan got, 2)
	go func() {
		for i := 0; i < 2; i++ {
			ev, err := st.Recv()
			if err != nil {
				return
			}
			a := map[string]string{}
			for k, v := range ev.GetAttributes() {
				a[k] = v.GetCeString()
			}
			events <- got{ev.GetTextData(), ev.GetId(), a}
			var q struct {
				RequestID string `json:"requestId"`
			}
			_ = json.Unmarshal([]byte(ev.GetTextData()), &q)
			_ = st.Send(textEvent(strings.Replace(ev.GetType(), "Request", "Response", 1), `{"requestId":"`+q.RequestID+`","success":true,"matches":true}`))
		}
	}()
	call := workflow.Call{Tenant: "t1", Auth: workflow.Auth{Kind: "user", ID: "u1", Roles: []string{"R1", "R2"}}, TxToken: "tok",
		TransactionID: "tx-9", Meta: workflow.Meta{ID: "e-9", ModelName: "orders", ModelVersion: 3, State: "A", TransactionID: "tx-8"},
		Data: []byte(`{"k":1}`), Workflow: "wf", Transition: "go", StateFrom: "A", StateTo: "B", Parameters: "ctx",
		Tags: []string{"raw"}, Timeout: 5 * time.Second}
	ctx := context.Background()
	if _, err := s.DispatchProcessor(ctx, &workflow.ProcessorCall{Call: call, Processor: "enrich"}); err != nil {
		t.Fatal(err)
	}
	p := <-events
	var m map[string]any
	if err := json.Unmarshal([]byte(p.text), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": m["requestId"], "entityId": "e-9", "processorId": "enrich", "processorName": "enrich",
		"workflow":      map[string]any{"id": "wf", "name": "wf"},
		"transition":    map[string]any{"id": "go", "name": "go", "stateFrom": "A", "stateTo": "B"},
		"transactionId": "tx-9", "success": true, "parameters": "ctx",
		"payload": map[string]any{"type": "JSON", "data": map[string]any{"k": float64(1)},
			"meta": map[string]any{"id": "e-9", "modelKey": map[string]any{"name": "orders", "version": float64(3)}, "state": "A", "transactionId": "tx-8"}},
	}
	delete(m, "requestId")
	if !equalJSON(m, want) {
		t.Fatalf("processor request\n got %v\nwant %v", m, want)
	}
	if p.id != want["id"] || p.attrs["authtype"] != "user" || p.attrs["authid"] != "u1" || p.attrs["authclaims"] != "R1,R2" || p.attrs["cyodatxtoken"] != "tok" {
		t.Fatalf("envelope id %s attrs %v", p.id, p.attrs)
	}

	call.Auth.Roles, call.TxToken, call.Data = nil, "", nil
	if _, err := s.DispatchCriteria(ctx, &workflow.CriteriaCall{Call: call, Criteria: "fn", Target: "TRANSITION"}); err != nil {
		t.Fatal(err)
	}
	c := <-events
	m = nil
	_ = json.Unmarshal([]byte(c.text), &m)
	if m["criteriaId"] != "fn" || m["criteriaName"] != "fn" || m["target"] != "TRANSITION" || m["payload"] != nil || m["processorName"] != nil {
		t.Fatalf("criteria request %s", c.text)
	}
	if _, ok := c.attrs["authclaims"]; ok {
		t.Fatalf("authclaims without roles: %v", c.attrs)
	}
	if _, ok := c.attrs["cyodatxtoken"]; ok {
		t.Fatalf("tx token without a transaction: %v", c.attrs)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// flaky fails verification the first n times.
type flaky struct {
	mu sync.Mutex
	n  int
}

func (f *flaky) VerifyToken(ctx context.Context, tok string) (*iam.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n > 0 {
		f.n--
		return nil, errors.New("not yet")
	}
	return testTokens.VerifyToken(ctx, tok)
}

func TestMemberRunReconnects(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	s1 := New(Config{}, &flaky{n: 2}, slog.New(slog.DiscardHandler))
	s1.Start(lis, nil)
	ctx, cancel := context.WithCancel(context.Background())
	joins := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- member.Run(ctx, member.Config{Endpoint: addr, Token: "m2m-t1", Tags: []string{"r"}, Log: slog.New(slog.DiscardHandler)},
			member.Handlers{}, func(m *member.Member) { joins <- m.ID() })
	}()
	first := <-joins // after two refused attempts
	await.Until(t, await.Long, func() bool { return s1.Members("t1") == 1 }, "member count")

	// The server goes away and comes back on the same address.
	s1.Stop()
	lis2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("address not reusable at once: %v", err)
	}
	s2 := New(Config{}, testTokens, slog.New(slog.DiscardHandler))
	s2.Start(lis2, nil)
	defer s2.Stop()
	if second := <-joins; second == first {
		t.Fatal("reconnect reused the old member id")
	}
	await.Until(t, await.Long, func() bool { return s2.Members("t1") == 1 }, "member count")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
	await.Until(t, await.Long, func() bool { return s2.Members("t1") == 0 }, "member count")
}

// TestGreetedMemberIsDispatchable: once member.Connect returns (the greet
// has arrived), a dispatch with no dispatch wait must find the member. The
// server used to greet before registering, so a dispatch right after the
// greet could get NO_COMPUTE_MEMBER_FOR_TAG.
func TestGreetedMemberIsDispatchable(t *testing.T) {
	// Not a wait: the sleep widens the window between greet and
	// registration that the old order left open.
	testHookAfterGreet = func() { time.Sleep(100 * time.Millisecond) }
	t.Cleanup(func() { testHookAfterGreet = nil })
	s, addr := startServer(t, Config{})
	e := &workflow.Engine{Dispatcher: s}
	for i := 0; i < 3; i++ {
		tag := fmt.Sprintf("fresh-%d", i)
		m := connect(t, addr, "m2m-t1", member.Handlers{Processor: func(context.Context, *member.Call) (json.RawMessage, error) {
			return nil, nil
		}}, tag)
		if _, err := e.Create(context.Background(), procSet(t, "SYNC", `{"calculationNodesTags":"`+tag+`"}`), run("t1", `{}`)); err != nil {
			t.Fatalf("join %d: dispatch right after the greet: %v", i, err)
		}
		m.Close()
	}
}
