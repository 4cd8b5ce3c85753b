package peer

import (
	"bytes"
	"errors"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

func testKey(t testing.TB, b byte) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const route = "/internal/dispatch/callout"

func ct() []byte { return []byte(ContentType) }

func tsb(ts int64) []byte { return []byte(strconv.FormatInt(ts, 10)) }

// TestGuardOpens: a sealed call opens once; a replay, a tampered body, a
// body for another route, method or timestamp, another secret's seal, a
// stale or future timestamp and a wrong content type are all refused.
func TestGuardOpens(t *testing.T) {
	k := testKey(t, 1)
	now := time.Unix(1_800_000_000, 0)
	g := NewGuard(k).WithClock(func() time.Time { return now })
	ts := now.Unix()
	body := k.Seal("POST", route, ts, []byte(`{"a":1}`))
	plain, gotTS, err := g.Open("POST", route, ct(), tsb(ts), body)
	if err != nil || string(plain) != `{"a":1}` || gotTS != ts {
		t.Fatalf("genuine call: %q %d %v", plain, gotTS, err)
	}
	if _, _, err := g.Open("POST", route, ct(), tsb(ts), body); !errors.Is(err, ErrForbidden) {
		t.Fatalf("replay: %v", err)
	}
	tampered := bytes.Clone(body)
	tampered[len(tampered)-1] ^= 1
	other := testKey(t, 2)
	for name, c := range map[string]struct {
		method, path string
		ctype, ts    []byte
		body         []byte
	}{
		"tampered":           {"POST", route, ct(), tsb(ts), tampered},
		"other route":        {"POST", "/internal/dispatch/scheduled-task", ct(), tsb(ts), k.Seal("POST", route, ts, []byte("x"))},
		"other method":       {"PUT", route, ct(), tsb(ts), k.Seal("POST", route, ts, []byte("x"))},
		"other timestamp":    {"POST", route, ct(), tsb(ts + 1), k.Seal("POST", route, ts, []byte("x"))},
		"other secret":       {"POST", route, ct(), tsb(ts), other.Seal("POST", route, ts, []byte("x"))},
		"stale":              {"POST", route, ct(), tsb(ts - 31), k.Seal("POST", route, ts-31, []byte("x"))},
		"future":             {"POST", route, ct(), tsb(ts + 31), k.Seal("POST", route, ts+31, []byte("x"))},
		"content type":       {"POST", route, []byte("application/json"), tsb(ts), k.Seal("POST", route, ts, []byte("x"))},
		"no timestamp":       {"POST", route, ct(), nil, k.Seal("POST", route, ts, []byte("x"))},
		"short body":         {"POST", route, ct(), tsb(ts), []byte("short")},
		"plaintext":          {"POST", route, ct(), tsb(ts), []byte(`{"kind":"processor","tenant":"A","request":{}}`)},
		"over the body size": {"POST", route, ct(), tsb(ts), make([]byte, MaxBody+1)},
	} {
		if _, _, err := g.Open(c.method, c.path, c.ctype, c.ts, c.body); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: %v, want ErrForbidden", name, err)
		}
	}
	// Within the window either way, a call opens.
	for _, d := range []int64{-30, 30} {
		b := k.Seal("POST", route, ts+d, []byte("edge"))
		if _, _, err := g.Open("POST", route, ct(), tsb(ts+d), b); err != nil {
			t.Errorf("skew %ds: %v", d, err)
		}
	}
}

// TestGuardReplayWindow: a nonce is remembered for twice the skew; the
// cache refuses new calls when full of live nonces instead of forgetting
// one that could still be replayed; forged calls never take a slot.
func TestGuardReplayWindow(t *testing.T) {
	k := testKey(t, 1)
	now := time.Unix(1_800_000_000, 0)
	g := NewGuard(k).WithClock(func() time.Time { return now })
	g.max = 3
	ts := now.Unix()
	first := k.Seal("POST", route, ts, []byte("1"))
	if _, _, err := g.Open("POST", route, ct(), tsb(ts), first); err != nil {
		t.Fatal(err)
	}
	// Forged calls do not fill the cache.
	for i := 0; i < 10; i++ {
		if _, _, err := g.Open("POST", route, ct(), tsb(ts), testKey(t, 9).Seal("POST", route, ts, []byte("f"))); !errors.Is(err, ErrForbidden) {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, _, err := g.Open("POST", route, ct(), tsb(ts), k.Seal("POST", route, ts, []byte("n"))); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, _, err := g.Open("POST", route, ct(), tsb(ts), k.Seal("POST", route, ts, []byte("n"))); !errors.Is(err, ErrReplayFull) {
		t.Fatalf("full cache: %v", err)
	}
	// 59 s later the first nonce is still remembered (its timestamp is
	// out of the window by then anyway); after 60 s the slots free up.
	now = now.Add(59 * time.Second)
	if _, _, err := g.Open("POST", route, ct(), tsb(ts), first); !errors.Is(err, ErrForbidden) {
		t.Fatalf("replay at 59 s: %v", err)
	}
	now = now.Add(2 * time.Second)
	ts2 := now.Unix()
	if _, _, err := g.Open("POST", route, ct(), tsb(ts2), k.Seal("POST", route, ts2, []byte("later"))); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if len(g.seen) != 1 {
		t.Fatalf("%d nonces remembered, want 1", len(g.seen))
	}
}

// TestResponseBinding: a response opens only for the request it answers.
func TestResponseBinding(t *testing.T) {
	k := testKey(t, 1)
	req1 := k.Seal("POST", route, 100, []byte("q1"))
	req2 := k.Seal("POST", route, 100, []byte("q2"))
	resp := k.SealResponse("POST", route, 100, Nonce(req1), []byte("answer"))
	if got, err := k.OpenResponse("POST", route, 100, Nonce(req1), resp); err != nil || string(got) != "answer" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := k.OpenResponse("POST", route, 100, Nonce(req2), resp); err == nil {
		t.Fatal("a response opened for another request")
	}
	if _, err := k.OpenResponse("POST", route, 100, Nonce(req1), req1); err == nil {
		t.Fatal("a request body opened as a response")
	}
}

func TestKeyDerivation(t *testing.T) {
	if _, err := NewKey(nil); err == nil {
		t.Fatal("empty secret accepted")
	}
	if _, err := DecodeSecret("abcd"); err == nil {
		t.Fatal("short secret accepted")
	}
	s, err := DecodeSecret(string(bytes.Repeat([]byte("0f"), 32)))
	if err != nil || len(s) != 32 {
		t.Fatal(s, err)
	}
	// Same secret, same key: one node opens what another sealed.
	a, b := testKey(t, 7), testKey(t, 7)
	body := a.Seal("POST", route, 5, []byte("x"))
	if got, err := b.open("POST", route, 5, body); err != nil || string(got) != "x" {
		t.Fatal(got, err)
	}
}

func TestAllowed(t *testing.T) {
	for s, want := range map[string][2]bool{ // [loopback refused, loopback allowed]
		"10.0.0.5":         {true, true},
		"192.168.1.2":      {true, true},
		"8.8.8.8":          {true, true},
		"127.0.0.1":        {false, true},
		"::1":              {false, true},
		"::ffff:127.0.0.1": {false, true},
		"169.254.169.254":  {false, false},
		"fe80::1":          {false, false},
		"0.0.0.0":          {false, false},
		"::":               {false, false},
		"224.0.0.1":        {false, false},
		"ff02::1":          {false, false},
	} {
		ip := netip.MustParseAddr(s)
		if got := [2]bool{Allowed(ip, false), Allowed(ip, true)}; got != want {
			t.Errorf("%s: %v, want %v", s, got, want)
		}
	}
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080": true, "http://localhost:1/x": true, "https://[::1]:9": true,
		"http://node-a:8080": false, "http://10.1.2.3:8080": false, "node": false,
	} {
		if LoopbackURL(u) != want {
			t.Errorf("LoopbackURL(%q) = %v", u, !want)
		}
	}
}
