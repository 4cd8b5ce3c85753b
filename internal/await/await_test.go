package await

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	if !Poll(Long, func() bool { return n.Add(1) >= 3 }) {
		t.Fatal("Poll gave up on a condition that holds on the third call")
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("cond called %d times, want 3 (Poll stops as soon as it holds)", got)
	}
	if Poll(5*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never holds")
	}
}

type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = format
}

func TestUntilFailsWithMessage(t *testing.T) {
	t.Parallel()
	f := &fakeTB{}
	Until(f, time.Millisecond, func() bool { return false }, "job %s done", "x")
	if f.failed == "" {
		t.Fatal("Until did not fail on timeout")
	}
	f = &fakeTB{}
	Until(f, Long, func() bool { return true }, "never")
	if f.failed != "" {
		t.Fatal("Until failed on a condition that holds")
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	got := Value(t, Long, func() (int32, bool) { v := n.Add(1); return v, v == 4 }, "count")
	if got != 4 {
		t.Fatalf("Value = %d, want 4", got)
	}
}
