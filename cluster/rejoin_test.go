package cluster

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"svc/internal/await"
)

func TestIsSelf(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		seed, bind string
		want       bool
	}{
		{"127.0.0.1:7946", "127.0.0.1:7946", true},
		{"localhost:7946", "127.0.0.1:7946", true},
		{"127.0.0.1:7946", "0.0.0.0:7946", true},
		{"127.0.0.1:7946", ":7946", true},
		{"127.0.0.1:07946", "127.0.0.1:7946", true},
		{"127.0.0.1:7947", "127.0.0.1:7946", false},
		{"127.0.0.2:7946", "127.0.0.1:7946", false},
		{"192.0.2.1:7946", "0.0.0.0:7946", false}, // TEST-NET: no interface of this machine
		{"nonsense", "127.0.0.1:7946", false},
	} {
		if got := isSelf(ctx, tc.seed, tc.bind); got != tc.want {
			t.Errorf("isSelf(%q, %q) = %v, want %v", tc.seed, tc.bind, got, tc.want)
		}
	}
}

// TestGossipFounderServesAlone (issue 26 item 5): a node whose seed list
// names itself and peers that are not up forms a cluster of one at once
// instead of failing after SVC_STARTUP_TIMEOUT; the peers join it as they
// start, and a node whose seed list does not name itself still refuses to
// serve alone.
func TestGossipFounderServesAlone(t *testing.T) {
	a, b, c := freeAddr(t), freeAddr(t), freeAddr(t)
	seeds := []string{a, b, c}
	start := func(id, addr string, timeout time.Duration) (*Gossip, error) {
		g, err := JoinGossip(context.Background(), GossipConfig{NodeID: id, HTTPAddr: "http://" + id, BindAddr: addr,
			Seeds: seeds, HMACSecret: testSecret, StartupTimeout: timeout, StabilityWindow: 200 * time.Millisecond,
			Log: slog.New(slog.DiscardHandler)})
		if err == nil {
			t.Cleanup(g.Close)
		}
		return g, err
	}
	// An hour of startup timeout: the old behaviour (wait for a seed,
	// then exit) would hold the test until its own timeout.
	ga, err := start("n1", a, time.Hour)
	if err != nil {
		t.Fatalf("founder: %v", err)
	}
	if got := ids(ga.Live()); got != "n1" {
		t.Fatalf("founder's view %q, want n1 alone", got)
	}
	if ok, detail := ga.Report(); !ok {
		t.Fatalf("founder not ready: %s", detail)
	}
	gb, err := start("n2", b, time.Minute)
	if err != nil {
		t.Fatalf("second node: %v", err)
	}
	gc, err := start("n3", c, time.Minute)
	if err != nil {
		t.Fatalf("third node: %v", err)
	}
	for _, g := range []*Gossip{ga, gb, gc} {
		await.Until(t, await.Long, func() bool { return ids(g.Live()) == "n1,n2,n3" }, "three live nodes on %s", g.Self().ID)
	}

	// Not named in its own seeds: no founding, the join fails.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	_, err = JoinGossip(context.Background(), GossipConfig{NodeID: "n4", BindAddr: freeAddr(t), Seeds: []string{dead},
		HMACSecret: testSecret, StartupTimeout: 300 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Fatal("a node whose seeds are all down and do not name it joined")
	}
}

// TestGossipFoundersMerge: two nodes that each named themselves and found
// the other down (they started together) merge through the background
// join.
func TestGossipFoundersMerge(t *testing.T) {
	a, b := freeAddr(t), freeAddr(t)
	seedsA := []string{a, b}
	ga, err := JoinGossip(context.Background(), GossipConfig{NodeID: "m1", BindAddr: a, Seeds: seedsA,
		HMACSecret: testSecret, StartupTimeout: time.Hour, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ga.Close)
	// m2 names only itself: it founds a cluster of its own, which m1's
	// background join reaches.
	gb, err := JoinGossip(context.Background(), GossipConfig{NodeID: "m2", BindAddr: b, Seeds: []string{b},
		HMACSecret: testSecret, StartupTimeout: time.Hour, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gb.Close)
	for _, g := range []*Gossip{ga, gb} {
		await.Until(t, await.Long, func() bool { return ids(g.Live()) == "m1,m2" }, "two live nodes on %s", g.Self().ID)
	}
}
