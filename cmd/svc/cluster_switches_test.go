package main

import (
	"testing"

	"svc/internal/await"
	"svc/storage/pgtest"
)

// TestClusterScopeSwitchesEveryNode (issue 26 item 1): on a cluster of
// real svc processes, POST {ctx}/admin/log-level?scope=cluster on one node
// changes every node's level (over the cluster bus), the same for the trace
// sampler, while a change without scope stays on the node asked.
func TestClusterScopeSwitchesEveryNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of svc processes")
	}
	db := pgtest.New(t, "cluster_switches")
	nodes := startTestCluster(t, db, []string{"a", "b", "c"}, "SVC_SCHEDULER_ENABLED=false")
	a := nodes[0]
	// The nodes start at SVC_LOG_LEVEL=warn.
	if got := string(a.must(t, "GET", "/admin/log-level", "")); got != `{"level":"warn"}` {
		t.Fatalf("initial level on a: %s", got)
	}
	if got := string(a.must(t, "POST", "/admin/log-level?scope=cluster", `{"level":"debug"}`)); got != `{"level":"debug","previous":"warn"}` {
		t.Fatalf("cluster-wide POST on a: %s", got)
	}
	for _, n := range nodes {
		await.Until(t, await.Long, func() bool {
			return string(n.must(t, "GET", "/admin/log-level", "")) == `{"level":"debug"}`
		}, "log level debug on node %s", n.id)
	}
	const ratio = `{"sampler":"ratio","ratio":0.25,"parent_based":false}`
	if got := string(nodes[1].must(t, "POST", "/admin/trace-sampler?scope=cluster", ratio)); got != ratio {
		t.Fatalf("cluster-wide sampler POST on b: %s", got)
	}
	for _, n := range nodes {
		await.Until(t, await.Long, func() bool {
			return string(n.must(t, "GET", "/admin/trace-sampler", "")) == ratio
		}, "sampler on node %s", n.id)
	}
	// Node scope: only the node asked.
	nodes[1].must(t, "POST", "/admin/log-level", `{"level":"info"}`)
	if got := string(a.must(t, "GET", "/admin/log-level", "")); got != `{"level":"debug"}` {
		t.Fatalf("a node-scope change on b reached a: %s", got)
	}
	if code, body := a.call(t, "POST", "/admin/log-level?scope=everywhere", `{"level":"info"}`); code != 400 {
		t.Fatalf("unknown scope: %d %s", code, body)
	}
	if code, body := a.call(t, "POST", "/admin/trace-sampler", `{"sampler":"sometimes"}`); code != 400 {
		t.Fatalf("unknown sampler: %d %s", code, body)
	}
}
