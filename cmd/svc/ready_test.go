package main

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svc/internal/await"
)

// TestCachedReadyProbesOncePerTTL: health checks inside the TTL cost no
// probe; past it one probe refreshes the answer, DOWN included.
func TestCachedReadyProbesOncePerTTL(t *testing.T) {
	var probes atomic.Int64
	var up atomic.Bool
	up.Store(true)
	now := time.Unix(1_000_000, 0)
	var mu sync.Mutex
	c := newCachedReady(func() bool { probes.Add(1); return up.Load() }, time.Second)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var wg sync.WaitGroup
	if !c.Ready() {
		t.Fatal("first probe: not ready")
	}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if !c.Ready() {
					t.Error("not ready")
				}
			}
		}()
	}
	wg.Wait()
	if n := probes.Load(); n != 1 {
		t.Fatalf("%d probes for 801 checks inside the TTL", n)
	}
	up.Store(false)
	if !c.Ready() {
		t.Fatal("the cached answer should hold inside the TTL")
	}
	mu.Lock()
	now = now.Add(1100 * time.Millisecond)
	mu.Unlock()
	if c.Ready() {
		t.Fatal("storage down not seen after the TTL")
	}
	if n := probes.Load(); n != 2 {
		t.Fatalf("%d probes", n)
	}
}

// TestCachedReadyDoesNotQueueBehindSlowProbe: while one refresh hangs,
// other checks answer from the previous result.
func TestCachedReadyDoesNotQueueBehindSlowProbe(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	c := newCachedReady(func() bool {
		if calls.Add(1) > 1 {
			<-release
		}
		return true
	}, time.Nanosecond)
	c.Ready()
	done := make(chan struct{})
	go func() { defer close(done); c.Ready() }() // the refresh, held
	await.Until(t, await.Long, func() bool { return calls.Load() >= 2 }, "the refresh probe starts")
	for i := 0; i < 10; i++ {
		if !c.Ready() {
			t.Fatal("previous answer not served")
		}
	}
	close(release)
	<-done
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d probes, want 2", n)
	}
}
