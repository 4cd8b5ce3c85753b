// Package await is the one way tests wait for something that happens on
// another goroutine or in another process: poll a condition until it holds,
// with a generous bound so a loaded machine (CI, two shared cores) slows a
// test down instead of failing it. The bound is a failure detector, never a
// timing assertion: a passing test returns as soon as the condition holds.
package await

import (
	"fmt"
	"testing"
	"time"
)

// Long is the default bound: long enough that only a hung condition reaches
// it under -race on a loaded 2-core machine.
const Long = 60 * time.Second

// maxInterval caps the back-off between two polls, so a condition that
// becomes true is noticed within a few milliseconds of it.
const maxInterval = 20 * time.Millisecond

// Until polls cond until it returns true, failing t (t.Fatalf, so call it
// from the test's goroutine) with msg and args when timeout passes first.
// Polls start 1 ms apart and back off to 20 ms.
func Until(t testing.TB, timeout time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("await: %s: not reached within %s", fmt.Sprintf(msg, args...), timeout)
	}
}

// Poll is Until without a test: it reports whether cond held before timeout
// passed, for helpers that fail with their own message or are not on the
// test's goroutine.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	interval := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
		if interval < maxInterval {
			interval *= 2
		}
	}
}

// Value polls get until it returns ok, and returns its value; on timeout it
// fails t with msg and the last value seen.
func Value[T any](t testing.TB, timeout time.Duration, get func() (T, bool), msg string, args ...any) T {
	t.Helper()
	var last T
	if !Poll(timeout, func() bool {
		v, ok := get()
		last = v
		return ok
	}) {
		t.Fatalf("await: %s: not reached within %s (last: %+v)", fmt.Sprintf(msg, args...), timeout, last)
	}
	return last
}
