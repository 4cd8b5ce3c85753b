package compute

import (
	"testing"

	"svc/compute/member"
)

// TestStopWaitsForMemberStreams: when Stop returns, every member stream
// handler has returned (its member deregistered), so no goroutine of a
// stopped server outlives it. gRPC's Stop does not wait for handlers unless
// told to; a handler still running after Stop called s.wg.Add after
// s.wg.Wait, which the race detector reported in whichever test ran next
// (TestTLSListener in CI).
func TestStopWaitsForMemberStreams(t *testing.T) {
	t.Parallel()
	for i := 0; i < 5; i++ {
		s, addr := startServer(t, Config{})
		connect(t, addr, "m2m-t1", member.Handlers{}, "a")
		connect(t, addr, "m2m-t1", member.Handlers{}, "b")
		if n := s.Members("t1"); n != 2 {
			t.Fatalf("%d members after two greets, want 2", n)
		}
		s.Stop()
		if n := s.Members("t1"); n != 0 {
			t.Fatalf("round %d: %d members still registered after Stop returned", i, n)
		}
	}
}
