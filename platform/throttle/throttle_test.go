package throttle

import (
	"fmt"
	"net"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPerClientLimitAndWindow(t *testing.T) {
	l := New(Limits{PerClient: 3, Window: time.Minute})
	for i := 0; i < 3; i++ {
		if _, ok := l.Allow("c1", fmt.Sprint("10.0.0.", i), t0); !ok {
			t.Fatalf("attempt %d refused", i)
		}
		l.Fail("c1", fmt.Sprint("10.0.0.", i), t0)
	}
	wait, ok := l.Allow("c1", "10.0.0.9", t0.Add(20*time.Second))
	if ok || wait != 40*time.Second {
		t.Fatalf("4th attempt from a fresh address: %v %v, want refused for 40s", ok, wait)
	}
	if _, ok := l.Allow("c2", "10.0.0.9", t0); !ok {
		t.Fatal("another client id is throttled")
	}
	if _, ok := l.Allow("c1", "10.0.0.9", t0.Add(time.Minute)); !ok {
		t.Fatal("still refused after the window")
	}
}

func TestPerAddressLimit(t *testing.T) {
	l := New(Limits{PerAddress: 2, Window: time.Minute})
	l.Fail("a", "1.2.3.4", t0)
	l.Fail("", "1.2.3.4", t0) // unreadable credentials count too
	if _, ok := l.Allow("z", "1.2.3.4", t0); ok {
		t.Fatal("address over its limit allowed")
	}
	if _, ok := l.Allow("z", "1.2.3.5", t0); !ok {
		t.Fatal("another address refused")
	}
}

// A pair that authenticated keeps working while the client id is under
// attack from elsewhere; a failure of the pair itself ends that.
func TestTrustedPairKeepsFullRate(t *testing.T) {
	l := New(Limits{PerClient: 2, PerAddress: 2, Window: time.Minute})
	l.Succeed("c1", "10.0.0.1", t0)
	for i := 0; i < 10; i++ {
		l.Fail("c1", "66.6.6.6", t0)
	}
	if _, ok := l.Allow("c1", "66.6.6.6", t0); ok {
		t.Fatal("the guesser is not throttled")
	}
	for i := 0; i < 100; i++ {
		if _, ok := l.Allow("c1", "10.0.0.1", t0.Add(time.Second)); !ok {
			t.Fatalf("valid client throttled at request %d", i)
		}
		l.Succeed("c1", "10.0.0.1", t0.Add(time.Second))
	}
	l.Fail("c1", "10.0.0.1", t0.Add(2*time.Second))
	if _, ok := l.Allow("c1", "10.0.0.1", t0.Add(2*time.Second)); ok {
		t.Fatal("a failing trusted pair keeps its exemption")
	}
	// Trust lapses after a window without success.
	l.Succeed("c2", "10.0.0.2", t0)
	l.Fail("c2", "10.0.0.3", t0.Add(time.Minute))
	l.Fail("c2", "10.0.0.3", t0.Add(time.Minute))
	if _, ok := l.Allow("c2", "10.0.0.2", t0.Add(time.Minute+time.Second)); ok {
		t.Fatal("trust outlived its window")
	}
}

// Past MaxKeys, new keys share one counter: a flood of fresh client ids is
// throttled as one, not forgotten.
func TestOverflowSharesOneCounter(t *testing.T) {
	l := New(Limits{PerClient: 3, Window: time.Minute, MaxKeys: 4})
	for i := 0; i < 20; i++ {
		l.Fail(fmt.Sprint("id", i), "10.0.0.1", t0)
	}
	if _, ok := l.Allow("brand-new", "10.0.0.1", t0); ok {
		t.Fatal("overflowed ids are not throttled")
	}
	if _, ok := l.Allow("brand-new", "10.0.0.1", t0.Add(time.Minute)); !ok {
		t.Fatal("overflow counter never lapses")
	}
}

func TestNilLimiterAllows(t *testing.T) {
	l := New(Limits{})
	if l != nil {
		t.Fatal("disabled limits built a limiter")
	}
	l.Fail("a", "b", t0)
	l.Succeed("a", "b", t0)
	if _, ok := l.Allow("a", "b", t0); !ok {
		t.Fatal("nil limiter refused")
	}
}

func TestAddressKey(t *testing.T) {
	if k := AddressKey(net.ParseIP("192.0.2.7")); k != "192.0.2.7" {
		t.Fatal(k)
	}
	a, b := AddressKey(net.ParseIP("2001:db8::1")), AddressKey(net.ParseIP("2001:db8::ffff:1"))
	if a != b || a != "2001:db8::/64" {
		t.Fatalf("%s %s", a, b)
	}
}

func BenchmarkAllowTrusted(b *testing.B) {
	l := New(Limits{PerClient: 10, PerAddress: 30, Window: time.Minute})
	l.Succeed("c1", "10.0.0.1", t0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.Allow("c1", "10.0.0.1", t0)
	}
}

// TestExpiredKeysMakeRoomWithoutScan: a full table takes a fresh key once
// the oldest window has ended (the queue finds it), and keys whose windows
// keep restarting, or pairs trusted, failed and trusted again, leave one
// queue entry each, so the queues stay the size of their maps.
func TestExpiredKeysMakeRoomWithoutScan(t *testing.T) {
	l := New(Limits{PerClient: 1, PerAddress: 100, Window: time.Minute, MaxKeys: 2})
	l.Fail("a", "x", t0)
	l.Fail("b", "x", t0.Add(time.Second))
	l.Fail("c", "x", t0.Add(2*time.Second)) // table full: c shares the overflow counter
	if _, ok := l.Allow("c", "y", t0.Add(3*time.Second)); ok {
		t.Fatal("overflowed key not limited")
	}
	now := t0.Add(time.Minute) // a's window has ended
	l.Fail("d", "x", now)
	if _, ok := l.clients.m["d"]; !ok {
		t.Fatal("fresh key after the oldest window ended went to overflow")
	}
	if _, ok := l.clients.m["a"]; ok {
		t.Fatal("expired counter kept")
	}
	for i := 0; i < 1000; i++ {
		now = now.Add(time.Minute)
		l.Fail("d", "x", now)
		l.Succeed("e", "x", now)
		l.Fail("e", "x", now) // ends the trust; the next Succeed trusts again
	}
	if n := len(l.clients.queue.items) - l.clients.queue.head; n > 2*l.lim.MaxKeys {
		t.Fatalf("client queue holds %d entries for %d keys", n, len(l.clients.m))
	}
	if n := len(l.trustedQueue.items) - l.trustedQueue.head; n > 2*l.lim.MaxKeys {
		t.Fatalf("trusted queue holds %d entries for %d pairs", n, len(l.trusted))
	}
}
