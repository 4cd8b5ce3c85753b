package cluster

import (
	"fmt"
	"log/slog"
	"testing"
)

// BenchmarkGossipLive is the directory read that dispatch polling and
// every scheduler scan make.
func BenchmarkGossipLive(b *testing.B) {
	g := &Gossip{self: Node{ID: "n1"}, live: map[string]Node{}, log: slog.New(slog.DiscardHandler)}
	for i := 2; i <= 5; i++ {
		id := fmt.Sprintf("n%d", i)
		g.live[id] = Node{ID: id, HTTPAddr: "http://" + id, Tags: map[string][]string{"t": {"a", "b"}}}
	}
	g.resort()
	b.ReportAllocs()
	for b.Loop() {
		if len(g.Live()) != 5 {
			b.Fatal("live")
		}
	}
}

// BenchmarkFrameUnframe is one bus message's encoding and decoding.
func BenchmarkFrameUnframe(b *testing.B) {
	payload := []byte(`{"node":"n1","tenant":"t","name":"orders","version":1}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := frame(TopicModelInvalidate, payload)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, ok := unframe(m); !ok {
			b.Fatal("unframe")
		}
	}
}
