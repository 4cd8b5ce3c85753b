package compute

import (
	"context"
	json "github.com/goccy/go-json"
	"strings"
	"testing"
	"time"

	"svc/compute/member"
	"svc/compute/wire"
	"svc/internal/await"
	"svc/workflow"
)

// TestLivenessRefreshedByAnyMessage (docs/decisions/0019-compute-members.md: member liveness is
// refreshed by any message):
// members that answer keep-alives with an id-less ack (QT), or never ack
// but keep talking (CHW, CCE answer only the calls they get), outlive the
// keep-alive timeout; a silent one does not (TestKeepAliveAndEviction).
func TestLivenessRefreshedByAnyMessage(t *testing.T) {
	t.Parallel()
	// The timeout is twenty talk intervals: a member's goroutine held off
	// the CPU for a second on a loaded machine is not what this tests.
	s, addr := startServer(t, Config{KeepaliveInterval: 100 * time.Millisecond, KeepaliveTimeout: 2 * time.Second})
	talkers := []struct {
		name, typ, payload string
	}{
		{"id-less ack", wire.TypeAck, `{"sourceEventId":"k","owner":"PLAY","payload":null,"success":true}`},
		{"never acks, other traffic", "EntityProcessorCalculationResponse", `{"requestId":"none","entityId":"x","success":true}`},
	}
	done := make(chan struct{})
	defer close(done)
	for i, tk := range talkers {
		st, _ := rawStream(t, addr, "m2m-t1")
		if err := st.Send(textEvent(wire.TypeJoin, `{"owner":"PLAY","tags":["t`+string(rune('a'+i))+`"]}`)); err != nil {
			t.Fatal(err)
		}
		if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
			t.Fatalf("%s: join: %v", tk.name, err)
		}
		go func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if st.Send(textEvent(tk.typ, tk.payload)) != nil {
						return
					}
				}
			}
		}()
	}
	// Three keep-alive timeouts. A real sleep: outliving the timeout is the
	// behaviour under test, and liveness is judged on the wall clock
	// (lastSeen); the test runs in parallel with the package's others.
	time.Sleep(6 * time.Second)
	if n := s.Members("t1"); n != len(talkers) {
		t.Fatalf("%d of %d talking members still connected", n, len(talkers))
	}
}

// TestTagRoutingIsExact (docs/decisions/0019-compute-members.md): a dispatch
// goes to a member whose tag equals one of calculationNodesTags exactly;
// another case or a prefix is no match (503 NO_COMPUTE_MEMBER_FOR_TAG).
func TestTagRoutingIsExact(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	e := &workflow.Engine{Dispatcher: s}
	connect(t, addr, "m2m-t1", member.Handlers{Processor: func(context.Context, *member.Call) (json.RawMessage, error) {
		return nil, nil
	}}, "cyoda_application")
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 1 }, "member count")
	for _, tags := range []string{"Cyoda_Application", "cyoda_app", "CYODA_APPLICATION"} {
		_, err := e.Create(context.Background(), procSet(t, "SYNC", `{"calculationNodesTags":"`+tags+`"}`), run("t1", `{}`))
		if err == nil || !strings.Contains(err.Error(), "NO_COMPUTE_MEMBER_FOR_TAG") {
			t.Fatalf("tags %q: %v", tags, err)
		}
	}
	if _, err := e.Create(context.Background(), procSet(t, "SYNC", `{"calculationNodesTags":"other,cyoda_application"}`), run("t1", `{}`)); err != nil {
		t.Fatalf("exact tag among others: %v", err)
	}
}
