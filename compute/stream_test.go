package compute

import (
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/internal/await"
)

func TestJoinRules(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{})
	for _, tc := range []struct {
		name, token string
		first       *ce.CloudEvent
		code        codes.Code
		msg         string
	}{
		{"bad token", "nope", textEvent(wire.TypeJoin, `{"id":"a","tags":[]}`), codes.Unauthenticated, "authentication failed"},
		{"no token", "", textEvent(wire.TypeJoin, `{"id":"a","tags":[]}`), codes.Unauthenticated, "authentication failed"},
		{"without ROLE_M2M", "user-t1", textEvent(wire.TypeJoin, `{"id":"a","tags":[]}`), codes.PermissionDenied, "ROLE_M2M required for streaming"},
		{"first not a join", "m2m-t1", textEvent(wire.TypeKeepAlive, `{"id":"a"}`), codes.InvalidArgument, "first message must be CalculationMemberJoinEvent, got CalculationMemberKeepAliveEvent"},
		{"malformed join", "m2m-t1", textEvent(wire.TypeJoin, `{"id":`), codes.InvalidArgument, "invalid CalculationMemberJoinEvent payload"},
		{"proto_data join", "m2m-t1", &ce.CloudEvent{Type: wire.TypeJoin, Data: &ce.CloudEvent_ProtoData{}}, codes.InvalidArgument, "proto_data"},
		{"tenant mismatch", "m2m-t1", textEvent(wire.TypeJoin, `{"id":"a","tags":[],"joinedLegalEntityId":"t2"}`), codes.PermissionDenied, "tenant mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := rawStream(t, addr, tc.token)
			_ = st.Send(tc.first)
			_, err := recvUntilError(st)
			s, _ := status.FromError(err)
			if s.Code() != tc.code || !strings.Contains(s.Message(), tc.msg) {
				t.Fatalf("got %v %q, want %v %q", s.Code(), s.Message(), tc.code, tc.msg)
			}
		})
	}
}

func TestJoinGreet(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	for _, join := range []*ce.CloudEvent{
		textEvent(wire.TypeJoin, `{"id":"j1","tags":["a"],"joinedLegalEntityId":"t1"}`),
		// Client-template shapes: no id, extra owner, JSON in binary_data.
		{Id: "x", Type: wire.TypeJoin, Data: &ce.CloudEvent_BinaryData{BinaryData: []byte(`{"owner":"PLAY","tags":["a"]}`)}},
	} {
		st, cancel := rawStream(t, addr, "m2m-t1")
		if err := st.Send(join); err != nil {
			t.Fatal(err)
		}
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var g wire.Greet
		if ev.GetType() != wire.TypeGreet || wire.Decode(ev, &g) != nil || ev.GetTextData() == "" {
			t.Fatalf("greet %v", ev)
		}
		if g.MemberID == "" || g.MemberID != g.ID || g.JoinedLegalEntityID != "t1" || !g.Success {
			t.Fatalf("greet payload %+v", g)
		}
		if ev.GetSource() != wire.ServerSource || ev.GetSpecVersion() != "1.0" || ev.GetId() == "" {
			t.Fatalf("envelope %v", ev)
		}
		await.Until(t, await.Long, func() bool { return s.Members("t1") == 1 }, "member count")
		cancel()
		await.Until(t, await.Long, func() bool { return s.Members("t1") == 0 }, "member count")
	}
}

func TestKeepAliveAndEviction(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{KeepaliveInterval: 100 * time.Millisecond, KeepaliveTimeout: time.Second})
	// A member that acks (the member package does) stays connected.
	good := connect(t, addr, "m2m-t1", noHandlers, "keep")

	// A silent member gets keep-alives, then is evicted with
	// DeadlineExceeded.
	st, _ := rawStream(t, addr, "m2m-t1")
	if err := st.Send(textEvent(wire.TypeJoin, `{"id":"s","tags":["silent"]}`)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := recvUntilError(st)
	if s, _ := status.FromError(err); s.Code() != codes.DeadlineExceeded || s.Message() != "keep-alive timeout" {
		t.Fatalf("eviction: %v", err)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Fatalf("evicted after %v, before the timeout", elapsed)
	}
	kas := 0
	var greetID string
	for _, ev := range got {
		switch ev.GetType() {
		case wire.TypeGreet:
			var g wire.Greet
			_ = wire.Decode(ev, &g)
			greetID = g.MemberID
		case wire.TypeKeepAlive:
			var ka wire.KeepAlive
			_ = wire.Decode(ev, &ka)
			if ka.MemberID != greetID || ka.ID != greetID || !ka.Success {
				t.Fatalf("keep-alive %+v", ka)
			}
			kas++
		}
	}
	if kas < 2 {
		t.Fatalf("%d keep-alives before eviction", kas)
	}
	select {
	case <-good.Done():
		t.Fatalf("acking member was dropped: %v", good.Err())
	default:
	}
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 1 }, "member count")
}

func TestServerEchoesNoKeepAlive(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{KeepaliveInterval: time.Hour, KeepaliveTimeout: time.Hour})
	st, cancel := rawStream(t, addr, "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"id":"j","tags":[]}`))
	if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		_ = st.Send(textEvent(wire.TypeKeepAlive, `{"id":"k"}`))
		_ = st.Send(textEvent(wire.TypeAck, `{"sourceEventId":"k","success":true}`))
		_ = st.Send(textEvent("SomethingElse", `{}`))
		_ = st.Send(textEvent(wire.TypeJoin, `{"id":"again"}`))
	}
	_ = st.CloseSend()
	got, err := recvUntilError(st)
	cancel()
	if err != nil || len(got) != 0 {
		t.Fatalf("server answered %d events (%v); it must not echo", len(got), err)
	}
}

func TestNoVerifierNoMembers(t *testing.T) {
	t.Parallel()
	s := New(Config{}, nil, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Start(lis, nil)
	defer s.Stop()
	st, _ := rawStream(t, lis.Addr().String(), "m2m-t1")
	_ = st.Send(textEvent(wire.TypeJoin, `{"id":"a"}`))
	if _, err := recvUntilError(st); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("got %v", err)
	}
}
