package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"svc/compute/member"
	"svc/storage/pgtest"
)

// TestClusterMemberReconnectsAfterNodeKill: a compute member (svc's Go
// member client) given every node's gRPC endpoint joins n1 and serves a
// workflow started through n2. n1 is killed with SIGKILL; the member
// reconnects to a live node, and an entity created through n3 runs its
// processor again.
func TestClusterMemberReconnectsAfterNodeKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of svc processes")
	}
	db := pgtest.New(t, "cluster_reconnect")
	// A generous dispatch wait: after the kill, the node the member
	// rejoined has to gossip its tags to n3 (the test waits on events,
	// never on speed).
	nodes := startTestCluster(t, db, []string{"n1", "n2", "n3"}, "SVC_SCHEDULER_ENABLED=false", "SVC_DISPATCH_WAIT_TIMEOUT=30s")
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	n2.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"by":"x"}`)
	n2.must(t, "PUT", "/model/order/1/lock", "")
	n2.must(t, "POST", "/model/order/1/workflow/import", dispatchWorkflow)

	called := make(chan string, 4)
	joins := make(chan string, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- member.Run(ctx, member.Config{Endpoints: []string{n1.grpc, n2.grpc, n3.grpc}, Tags: []string{"far"},
			Log: slog.New(slog.DiscardHandler)}, member.Handlers{
			Processor: func(_ context.Context, call *member.Call) (json.RawMessage, error) {
				called <- call.Request.EntityID
				return json.RawMessage(`{"n":2,"by":"member"}`), nil
			}}, func(m *member.Member) { joins <- m.Endpoint() })
	}()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("member.Run returned %v", err)
		}
	}()
	await := func(ch chan string, what string) string {
		t.Helper()
		select {
		case v := <-ch:
			return v
		case <-time.After(90 * time.Second): // generous: a loaded 2-core box
			t.Fatalf("no %s within 90 s", what)
			return ""
		}
	}
	if ep := await(joins, "join"); ep != n1.grpc {
		t.Fatalf("member joined %s first, want n1 %s", ep, n1.grpc)
	}

	// Started through n2, served by the member on n1.
	id := createdIDs(t, n2.must(t, "POST", "/entity/JSON/order/1", `{"n":1,"by":"client"}`))[0]
	if got := await(called, "processor call"); got != id {
		t.Fatalf("processor ran for %s, want %s", got, id)
	}
	if st := entityState(t, n2, id); st != "DONE" {
		t.Fatalf("entity through n2: %s", st)
	}

	if err := n1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-n1.done
	ep := await(joins, "rejoin after the kill")
	if ep == n1.grpc {
		t.Fatal("the member rejoined the killed node")
	}
	t.Logf("member rejoined through %s", ep)
	for _, n := range []*clusterNode{n2, n3} {
		n.waitLive(t, 2)
	}

	// A new entity through n3 runs the processor on the reconnected member
	// (on n3 itself or forwarded to n2).
	id = createdIDs(t, n3.must(t, "POST", "/entity/JSON/order/1", `{"n":1,"by":"after the kill"}`))[0]
	if got := await(called, "processor call after the kill"); got != id {
		t.Fatalf("processor ran for %s, want %s", got, id)
	}
	if st := entityState(t, n3, id); st != "DONE" {
		t.Fatalf("entity through n3 after the kill: %s", st)
	}
}
