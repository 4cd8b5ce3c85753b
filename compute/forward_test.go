package compute

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/cluster"
	"svc/cluster/clustertest"
	"svc/compute/member"
	"svc/compute/wire"
	"svc/internal/await"
	"svc/platform/apierr"
	"svc/workflow"
)

type tagReport struct {
	tenant string
	tags   []string
}

// TestOnTagsChanged: every join and leave that changes a tenant's tag set
// is reported, in order, as the sorted union; members without tags show
// as an empty set, the last leave as nil; a join that changes nothing is
// not reported. Tags() matches.
func TestOnTagsChanged(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	var mu sync.Mutex
	var got []tagReport
	s.OnTagsChanged(func(tenant string, tags []string) {
		mu.Lock()
		got = append(got, tagReport{tenant, tags})
		mu.Unlock()
	})
	reports := func(n int) []tagReport {
		t.Helper()
		return await.Value(t, 20*time.Second, func() ([]tagReport, bool) {
			mu.Lock()
			defer mu.Unlock()
			c := slices.Clone(got)
			return c, len(c) >= n
		}, "%d tag reports", n)
	}
	m1 := connect(t, addr, "m2m-t1", member.Handlers{}, "b", "a")
	m2 := connect(t, addr, "m2m-t1", member.Handlers{}, "a") // no change: not reported
	m3 := connect(t, addr, "m2m-t2", member.Handlers{})      // no tags
	r := reports(2)
	if r[0].tenant != "t1" || !slices.Equal(r[0].tags, []string{"a", "b"}) || r[1].tenant != "t2" || r[1].tags == nil || len(r[1].tags) != 0 {
		t.Fatalf("reports %v", r)
	}
	if tg := s.Tags(); !slices.Equal(tg["t1"], []string{"a", "b"}) || tg["t2"] == nil {
		t.Fatalf("Tags() %v", tg)
	}
	m1.Close()
	r = reports(3)
	if r[2].tenant != "t1" || !slices.Equal(r[2].tags, []string{"a"}) {
		t.Fatalf("after m1 left: %v", r)
	}
	m2.Close()
	m3.Close()
	r = reports(5)
	for _, x := range r[3:] {
		if x.tags != nil {
			t.Fatalf("last leave of %s reported %v, want nil", x.tenant, x.tags)
		}
	}
	if tg := s.Tags(); len(tg) != 0 {
		t.Fatalf("Tags() after every leave: %v", tg)
	}
}

// TestForwardPicksMatchingPeer: with no local member a dispatch goes to a
// live peer (never this node) whose tags for the tenant overlap the
// required ones; a peer of another tenant, or without the tags, is not
// chosen. A member here wins over every peer.
func TestForwardPicksMatchingPeer(t *testing.T) {
	t.Parallel()
	mesh := clustertest.NewMesh()
	mesh.Put(cluster.Node{ID: "self", Tags: map[string][]string{"t1": {"x"}}})
	mesh.Put(cluster.Node{ID: "p-other-tenant", HTTPAddr: "http://o", Tags: map[string][]string{"t2": {"x"}}})
	mesh.Put(cluster.Node{ID: "p-other-tags", HTTPAddr: "http://g", Tags: map[string][]string{"t1": {"y"}}})
	mesh.Put(cluster.Node{ID: "p-match", HTTPAddr: "http://m", Tags: map[string][]string{"t1": {"z", "x"}}})
	s, addr := startServer(t, Config{DispatchWaitTimeout: time.Second})
	var mu sync.Mutex
	var called []string
	s.SetCluster(mesh.View("self"), func(ctx context.Context, n cluster.Node, path string, body []byte) ([]byte, error) {
		mu.Lock()
		called = append(called, n.ID)
		mu.Unlock()
		var co callout
		if err := json.Unmarshal(body, &co); err != nil || path != CalloutPath || co.Tenant != "t1" || co.TxToken != "tok" {
			return nil, errors.New("bad callout")
		}
		ok := true
		return json.Marshal(calloutReply{Response: &wire.Response{Success: &ok}})
	})
	call := &workflow.ProcessorCall{Processor: "p", Call: workflow.Call{Tenant: "t1", Auth: workflow.Auth{Kind: "user", ID: "u"},
		TxToken: "tok", Tags: []string{"x"}, TagsCSV: "x", Timeout: 5 * time.Second}}
	for range 5 {
		res, err := s.DispatchProcessor(context.Background(), call)
		if err != nil || !res.Success {
			t.Fatalf("%+v %v", res, err)
		}
	}
	// Schedule functions and criteria take the same path.
	fres, err := s.DispatchFunction(context.Background(), &workflow.FunctionCall{Function: "f", Call: call.Call})
	if err != nil || !fres.Success {
		t.Fatalf("function: %+v %v", fres, err)
	}
	cres, err := s.DispatchCriteria(context.Background(), &workflow.CriteriaCall{Criteria: "c", Call: call.Call})
	if err != nil || !cres.Success {
		t.Fatalf("criteria: %+v %v", cres, err)
	}
	mu.Lock()
	if len(called) != 7 {
		t.Fatalf("%d forwards, want 7", len(called))
	}
	for _, id := range called {
		if id != "p-match" {
			t.Fatalf("forwarded to %s", id)
		}
	}
	mu.Unlock()
	// No peer serves tag q: NO_COMPUTE_MEMBER_FOR_TAG after the wait.
	q := *call
	q.Tags, q.TagsCSV = []string{"q"}, "q"
	if _, err := s.DispatchProcessor(context.Background(), &q); !isCode(err, apierr.NoComputeMemberForTag.String()) {
		t.Fatalf("no peer: %v", err)
	}
	// A local member wins.
	connect(t, addr, "m2m-t1", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"local":true}`), nil
	}}, "x")
	res, err := s.DispatchProcessor(context.Background(), call)
	if err != nil || string(res.Data) != `{"local":true}` {
		t.Fatalf("local member: %+v %v", res, err)
	}
}

// TestForwardErrors: a transport failure is DISPATCH_FORWARD_FAILED (503,
// retryable); a typed error the peer reports keeps its code, message,
// retryability and properties; an untyped one stays untyped (the engine
// reports it as WORKFLOW_FAILED).
func TestForwardErrors(t *testing.T) {
	t.Parallel()
	mesh := clustertest.NewMesh()
	mesh.Put(cluster.Node{ID: "self"})
	mesh.Put(cluster.Node{ID: "peer", HTTPAddr: "http://p", Tags: map[string][]string{"t1": {"x"}}})
	s, _ := startServer(t, Config{})
	var reply func() ([]byte, error)
	s.SetCluster(mesh.View("self"), func(context.Context, cluster.Node, string, []byte) ([]byte, error) { return reply() })
	call := &workflow.CriteriaCall{Criteria: "c", Call: workflow.Call{Tenant: "t1", Auth: workflow.Auth{Kind: "user", ID: "u"},
		Tags: []string{"x"}, TagsCSV: "x"}}

	reply = func() ([]byte, error) { return nil, errors.New("connection refused") }
	_, err := s.DispatchCriteria(context.Background(), call)
	if e, ok := apierr.As(err); !ok || e.Code != apierr.DispatchForwardFailed || !e.Retryable {
		t.Fatalf("transport failure: %v", err)
	}

	reply = func() ([]byte, error) {
		return json.Marshal(calloutReply{Error: &replyError{Code: apierr.DispatchTimeout.String(), Message: "criteria c: slow", Retryable: true,
			Props: []replyErrProp{{Key: "tags", Value: "x"}}}})
	}
	_, err = s.DispatchCriteria(context.Background(), call)
	if e, ok := apierr.As(err); !ok || e.Code != apierr.DispatchTimeout || e.Message != "criteria c: slow" || !e.Retryable ||
		len(e.Props) != 1 || e.Props[0].Key != "tags" {
		t.Fatalf("typed error: %#v", err)
	}

	reply = func() ([]byte, error) { return json.Marshal(calloutReply{Error: &replyError{Message: "send failed"}}) }
	_, err = s.DispatchCriteria(context.Background(), call)
	if _, ok := apierr.As(err); ok || err == nil {
		t.Fatalf("untyped error became %#v", err)
	}

	reply = func() ([]byte, error) { return []byte("not json"), nil }
	if _, err = s.DispatchCriteria(context.Background(), call); !isCode(err, apierr.DispatchForwardFailed.String()) {
		t.Fatalf("garbled reply: %v", err)
	}
}

// TestServeCalloutLocalOnly: a forwarded call is served by this node's
// members only: with none it fails at once (no wait, no second hop).
func TestServeCalloutLocalOnly(t *testing.T) {
	t.Parallel()
	mesh := clustertest.NewMesh()
	mesh.Put(cluster.Node{ID: "self"})
	mesh.Put(cluster.Node{ID: "peer", HTTPAddr: "http://p", Tags: map[string][]string{"t1": {"x"}}})
	s, _ := startServer(t, Config{DispatchWaitTimeout: time.Minute})
	s.SetCluster(mesh.View("self"), func(context.Context, cluster.Node, string, []byte) ([]byte, error) {
		t.Error("a forwarded call was forwarded again")
		return nil, errors.New("no")
	})
	body, _ := json.Marshal(callout{Type: "EntityProcessorCalculationRequest", What: "processor p", Tenant: "t1", AuthKind: "user",
		AuthID: "u", Tags: []string{"x"}, TagsCSV: "x", TimeoutMs: 1000, Request: &wire.Request{}})
	// Were it to wait for a member, the context would end first and the
	// reply would carry no code.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := s.ServeCallout(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	var rep calloutReply
	if err := json.Unmarshal(out, &rep); err != nil || rep.Error == nil || rep.Error.Code != apierr.NoComputeMemberForTag.String() {
		t.Fatalf("reply %s %v", out, err)
	}
	if _, err := s.ServeCallout(context.Background(), []byte(`{"type":"Other","request":{}}`)); err == nil {
		t.Fatal("a callout of unknown type was served")
	}
	if _, err := s.ServeCallout(context.Background(), []byte(`{`)); err == nil {
		t.Fatal("a malformed callout was served")
	}
}

func isCode(err error, code string) bool {
	e, ok := apierr.As(err)
	return ok && e.Code.String() == code
}
