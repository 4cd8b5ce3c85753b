package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"svc/internal/await"
	"svc/internal/freeport"
)

const testSecret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// freeAddr picks an address for a gossip node. JoinGossip must be given its
// port: memberlist binds TCP and UDP on that one port and advertises it, so
// binding :0 and reading the address back does not apply. The pick is a
// probe (internal/freeport), so startNode retries with a fresh address when
// another process took the port in between ("address already in use").
func freeAddr(t *testing.T) string {
	t.Helper()
	return freeport.Addr(t)
}

func startNode(t *testing.T, id, secret string, seeds []string, timeout time.Duration) (*Gossip, string, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		g, err := JoinGossip(context.Background(), GossipConfig{NodeID: id, HTTPAddr: "http://" + id, BindAddr: addr,
			Seeds: seeds, HMACSecret: secret, StartupTimeout: timeout, StabilityWindow: 200 * time.Millisecond,
			Log: slog.New(slog.DiscardHandler)})
		if err != nil && attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			continue // the probed port was taken before memberlist bound it (memberlist formats the error with %v: match its text)
		}
		if err == nil {
			t.Cleanup(g.Close)
		}
		return g, addr, err
	}
}

func ids(ns []Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.ID
	}
	return strings.Join(s, ",")
}

func TestGossipMembershipBusAndTags(t *testing.T) {
	a, aAddr, err := startNode(t, "n2", testSecret, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := startNode(t, "n1", testSecret, []string{aAddr}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := startNode(t, "n3", testSecret, []string{aAddr}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Gossip{a, b, c} {
		await.Until(t, await.Long, func() bool { return ids(g.Live()) == "n1,n2,n3" }, "three live nodes on %s", g.Self().ID)
	}
	if n, ok := c.Lookup("n1"); !ok || n.HTTPAddr != "http://n1" {
		t.Fatalf("Lookup(n1) on n3 = %+v, %v", n, ok)
	}

	got := make(chan string, 10)
	for _, g := range []*Gossip{a, b, c} {
		id := g.Self().ID
		g.Subscribe("t", func(p []byte) { got <- id + ":" + string(p) })
	}
	if err := b.Publish("t", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		select {
		case s := <-got:
			seen[s] = true
		case <-time.After(60 * time.Second):
			t.Fatalf("publish reached only %v", seen)
		}
	}
	if !seen["n1:hi"] || !seen["n2:hi"] || !seen["n3:hi"] {
		t.Fatalf("deliveries %v", seen)
	}

	if err := a.SendTo("n3", "t", []byte("one")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "n3:one" {
			t.Fatalf("SendTo delivered %q", s)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("SendTo not delivered")
	}
	if err := a.SendTo("nope", "t", nil); err != ErrUnknownNode {
		t.Fatalf("SendTo unknown = %v", err)
	}

	b.SetTags(map[string][]string{"tenant-a": {"py", "ml"}})
	await.Until(t, await.Long, func() bool {
		n, _ := c.Lookup("n1")
		return fmt.Sprint(n.Tags["tenant-a"]) == "[py ml]"
	}, "n1's tags on n3")
	if ok, detail := a.Report(); !ok || !strings.Contains(detail, "3 live") {
		t.Fatalf("Report = %v %q", ok, detail)
	}

	c.Close()
	await.Until(t, await.Long, func() bool { return ids(b.Live()) == "n1,n2" }, "n3 gone from n1")
	if ok, _ := c.Report(); ok {
		t.Fatal("a node that left reports ready")
	}
}

func TestGossipWrongSecretCannotJoin(t *testing.T) {
	_, aAddr, err := startNode(t, "a", testSecret, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("ab", 32)
	_, _, err = startNode(t, "b", wrong, []string{aAddr}, 1500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "cannot join the cluster") {
		t.Fatalf("join with the wrong secret: %v", err)
	}
}

func TestGossipMetaTrimmedToLimit(t *testing.T) {
	a, _, err := startNode(t, "a", testSecret, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string][]string{}
	for i := range 40 {
		tags[fmt.Sprintf("tenant-%02d", i)] = []string{"some-long-tag-name"}
	}
	a.SetTags(tags) // would panic inside memberlist past 512 bytes
	if m := a.meta(512); len(m) == 0 || len(m) > 512 {
		t.Fatalf("meta is %d bytes", len(m))
	}
}

func TestFrameRoundTrip(t *testing.T) {
	b, err := frame("model.invalidate", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	topic, p, ok := unframe(b)
	if !ok || topic != "model.invalidate" || string(p) != "x" {
		t.Fatalf("unframe = %q %q %v", topic, p, ok)
	}
	for _, bad := range [][]byte{nil, {0}, {5, 'a'}, {0xff, 0xff, 0xff}} {
		if _, _, ok := unframe(bad); ok {
			t.Fatalf("unframe(%v) accepted", bad)
		}
	}
}

func FuzzUnframe(f *testing.F) {
	f.Add([]byte{1, 'a', 'b'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		topic, p, ok := unframe(b)
		if !ok {
			return
		}
		again, err := frame(topic, p)
		if err != nil {
			t.Fatal(err)
		}
		if t2, p2, ok := unframe(again); !ok || t2 != topic || string(p2) != string(p) {
			t.Fatal("round trip differs")
		}
	})
}

func TestLocalDirectoryAndBus(t *testing.T) {
	l := NewLocal(Node{ID: "solo", HTTPAddr: "http://x"}, nil)
	defer l.Close()
	if ids(l.Live()) != "solo" {
		t.Fatal(l.Live())
	}
	if _, ok := l.Lookup("other"); ok {
		t.Fatal("Lookup of another node")
	}
	got := make(chan string, 1)
	cancel := l.Subscribe("t", func(p []byte) { got <- string(p) })
	if err := l.Publish("t", []byte("p")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "p" {
			t.Fatal(s)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("not delivered")
	}
	cancel()
	l.SetTags(map[string][]string{"t": {"a"}})
	if n, _ := l.Lookup("solo"); len(n.Tags["t"]) != 1 {
		t.Fatal(n)
	}
	if err := l.SendTo("other", "t", nil); err != ErrUnknownNode {
		t.Fatal(err)
	}
}

// TestGossipWaitsForStabilityWindow: JoinGossip returns only after the
// member count has held for the stability window (a lower bound only, so a
// loaded machine cannot break it).
func TestGossipWaitsForStabilityWindow(t *testing.T) {
	start := time.Now()
	g, err := JoinGossip(context.Background(), GossipConfig{NodeID: "w", BindAddr: freeAddr(t), HMACSecret: testSecret,
		StartupTimeout: 30 * time.Second, StabilityWindow: 1500 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Fatalf("JoinGossip returned after %s, inside the 1.5 s stability window", el)
	}
}
