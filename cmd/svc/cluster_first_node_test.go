package main

import (
	"fmt"
	"testing"

	"svc/storage/pgtest"
)

// TestClusterFirstNodeStartsAlone (issue 26 item 5): three svc processes
// configured alike, every seed list naming all three nodes. The first one
// started finds the two others down: it forms a cluster of one and serves
// (before, it waited SVC_STARTUP_TIMEOUT, here 2 minutes, and exited, so
// it never got ready within waitReady's minute); the others join it as
// they start.
func TestClusterFirstNodeStartsAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of svc processes")
	}
	db := pgtest.New(t, "cluster_first")
	ids := []string{"a", "b", "c"}
	gossip := make([]string, len(ids))
	for i := range ids {
		gossip[i] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	start := func(i int) *clusterNode {
		n := startClusterNode(t, db, ids[i], gossip, "SVC_GOSSIP_ADDR="+gossip[i], "SVC_STARTUP_TIMEOUT=2m",
			"SVC_SCHEDULER_ENABLED=false")
		n.gossip = gossip[i]
		return n
	}
	a := start(0)
	a.waitLive(t, 1)
	// It serves: a model import and an entity write.
	a.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/first/1", `{"n":1}`)
	a.must(t, "PUT", "/model/first/1/lock", "")
	if got := createdIDs(t, a.must(t, "POST", "/entity/JSON/first/1", `{"n":2}`)); len(got) != 1 {
		t.Fatalf("write on the first node: %v", got)
	}
	b := start(1)
	for _, n := range []*clusterNode{a, b} {
		n.waitLive(t, 2)
	}
	c := start(2)
	for _, n := range []*clusterNode{a, b, c} {
		n.waitLive(t, 3)
	}
}
