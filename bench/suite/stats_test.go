package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := summarize([]float64{10, 12, 11})
	if s.N != 3 || s.Median != 11 || s.Min != 10 || s.Max != 12 || int(s.SpreadPct+0.5) != 9 {
		t.Fatalf("%+v", s)
	}
	if s.String() != "11.0 ±9 %" {
		t.Fatal(s.String())
	}
	if e := summarize([]float64{4, 1, 3, 2}); e.Median != 2.5 {
		t.Fatalf("even median %+v", e)
	}
	if one := summarize([]float64{1500}); one.String() != "1500" {
		t.Fatal(one.String())
	}
	if summarize(nil).String() != "—" {
		t.Fatal("empty")
	}
}

// TestRatiosPerRound: each sample is divided by its own round's yardstick,
// so a machine that slows down between rounds moves both alike.
func TestRatiosPerRound(t *testing.T) {
	r := ratios([]float64{1200, 2400, 5}, []float64{1000, 2000, 0})
	if len(r) != 2 || r[0] != 1.2 || r[1] != 1.2 {
		t.Fatalf("%v", r)
	}
}

func TestVerdict(t *testing.T) {
	base := summarize([]float64{100, 102, 98})
	if v := verdict(base, summarize([]float64{120, 121, 119})); v != "+20 %" {
		t.Fatal(v)
	}
	if v := verdict(base, summarize([]float64{101, 97, 110})); !strings.HasPrefix(v, "~") {
		t.Fatal(v)
	}
	if v := verdict(summary{}, base); v != "—" {
		t.Fatal(v)
	}
}

func TestBenchLine(t *testing.T) {
	if n := benchName("order-create/postgres"); n != "BenchmarkOrderCreate/postgres" {
		t.Fatal(n)
	}
	if l := benchLine("token/memory", 1523.4, "svc-us/op"); l != "BenchmarkToken/memory 1 1523.4 svc-us/op" {
		t.Fatal(l)
	}
}

func TestParseLoadgen(t *testing.T) {
	out := []byte(`scenario order-collection: POST …
requests 40 in 5.012s: 8 req/s; latency p50 95ms p90 110ms p99 130ms max 140ms; errors 0
server CPU 0.56 s (0.11 cores): 14.0 µs per entity
database CPU 2.81 s (0.56 cores): 70.4 µs per entity
`)
	var s sample
	if err := parseLoadgen(out, 1000, &s); err != nil {
		t.Fatal(err)
	}
	if s.SvcUs != 14.0 || s.PgUs != 70.4 || s.Rate != 8000 {
		t.Fatalf("%+v", s)
	}
	bad := []byte("requests 40 in 5s: 8 req/s; latency p50 1ms; errors 3 (first: status 401)\nserver CPU 1 s (0.2 cores): 3.0 µs per request\n")
	if err := parseLoadgen(bad, 1, &s); err == nil || !strings.Contains(err.Error(), "3 errors") {
		t.Fatalf("errors not refused: %v", err)
	}
	if err := parseLoadgen([]byte("loadgen: scenario setup: 401"), 1, &s); err == nil {
		t.Fatal("empty report accepted")
	}
}
