package changes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"svc/changefeed"
	"svc/compute/changes"
	cfpb "svc/compute/pb/changefeed"
	"svc/compute/wire"
	"svc/internal/await"
	"svc/storage"
)

func cursor(t *testing.T, s string) storage.ChangeCursor {
	t.Helper()
	c, err := storage.ParseChangeCursor(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var engines = []string{"memory", "sqlite", "postgres"}

// TestStreamDeliversAndResumes: on memory, SQLite and PostgreSQL, over
// real gRPC on loopback with real tokens: a durable subscription's
// stream receives the writes' events in commit order as CloudEvents (id
// the eventId, cursor and kind attributes, the event as JSON); an ack
// moves the stored cursor; a reconnect resumes after the acknowledged
// cursor and delivers the unacknowledged event again (at least once); a
// reconnect with resumeAfter resumes after it and acknowledges it.
func TestStreamDeliversAndResumes(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine)
			key := e.lockedModel("tenant-a", "order")
			other := e.lockedModel("tenant-a", "invoice")
			sub := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1},"includeBody":"AFTER"}`)

			s, at, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
			if err != nil {
				t.Fatal(err)
			}
			if at.Cursor != sub.Cursor || at.Window != changes.DefaultWindow || at.SubscriptionID != sub.ID {
				t.Fatalf("attached %+v, subscription cursor %s", at, sub.Cursor)
			}
			var ids, evIDs []string
			for i := range 3 {
				id, evID := e.create("tenant-a", key, i)
				ids, evIDs = append(ids, id), append(evIDs, evID)
			}
			e.create("tenant-a", other, 9) // another model: not this subscription's
			evIDs = append(evIDs, e.update("tenant-a", ids[0], 10))
			var got []changefeed.Event
			for i := range 4 {
				ev, m := s.event()
				kind := "CREATE"
				if i == 3 {
					kind = "UPDATE"
				}
				if ev.EventID != evIDs[i] || ev.Kind != kind || ev.ModelName != "order" || ev.ModelVersion != 1 ||
					ev.TenantID != "tenant-a" || len(ev.BodyAfter) == 0 {
					t.Fatalf("event %d: %+v", i, ev)
				}
				a := m.GetAttributes()
				if a[changes.AttrKind].GetCeString() != kind || a[changes.AttrSubject].GetCeString() != ev.EntityID ||
					a[changes.AttrModelName].GetCeString() != "order" || a[changes.AttrModelVersion].GetCeInteger() != 1 ||
					!a[changes.AttrTime].GetCeTimestamp().AsTime().Equal(ev.EmittedAt) || m.GetSpecVersion() != "1.0" || m.GetSource() == "" {
					t.Fatalf("attributes of event %d: %v", i, a)
				}
				if i > 0 && !cursor(t, got[i-1].Cursor).Less(cursor(t, ev.Cursor)) {
					t.Fatalf("cursor %s after %s", ev.Cursor, got[i-1].Cursor)
				}
				got = append(got, ev)
			}
			// Ack the second: the stored cursor moves to it.
			s.ack(got[1].Cursor)
			await.Until(t, await.Long, func() bool { return e.storedCursor("tenant-a", sub.ID) == got[1].Cursor },
				"stored cursor reaches the ack %s", got[1].Cursor)
			s.close()

			// Reconnect: the unacknowledged third and fourth come again.
			s2, at2, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
			if err != nil {
				t.Fatal(err)
			}
			if at2.Cursor != got[1].Cursor {
				t.Fatalf("resumed after %s, want %s", at2.Cursor, got[1].Cursor)
			}
			for i := 2; i < 4; i++ {
				if ev, _ := s2.event(); ev.EventID != got[i].EventID || ev.Cursor != got[i].Cursor {
					t.Fatalf("redelivered %d: %+v, want %+v", i, ev, got[i])
				}
			}
			s2.close()

			// resumeAfter: resumes after it and acknowledges up to it.
			s3, at3, err := e.open(e.tokAdmin, changes.Attach{SubscriptionID: sub.ID, ResumeAfter: got[2].Cursor})
			if err != nil {
				t.Fatal(err)
			}
			if at3.Cursor != got[2].Cursor || e.storedCursor("tenant-a", sub.ID) != got[2].Cursor {
				t.Fatalf("resumeAfter %s: attached %+v", got[2].Cursor, at3)
			}
			if ev, _ := s3.event(); ev.EventID != got[3].EventID {
				t.Fatalf("after resumeAfter: %+v", ev)
			}
			s3.ack(got[3].Cursor)
			// A client that half-closes ends the stream OK, its acks stored.
			if err := s3.s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if err := s3.end(); err != nil {
				t.Fatalf("half-closed stream ended %v", err)
			}
			if c := e.storedCursor("tenant-a", sub.ID); c != got[3].Cursor {
				t.Fatalf("stored %s after the last ack %s", c, got[3].Cursor)
			}
			// New writes reach a new stream; nothing old comes again.
			s4, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
			if err != nil {
				t.Fatal(err)
			}
			_, evID := e.create("tenant-a", key, 42)
			if ev, _ := s4.event(); ev.EventID != evID {
				t.Fatalf("after everything acked: %+v, want %s", ev, evID)
			}
		})
	}
}

// TestStreamRefusals: the HTTP door's tenant and role rules, and the
// protocol's: no or bad token Unauthenticated, no role PermissionDenied,
// another tenant's subscription NotFound, a malformed attach or ack
// InvalidArgument.
func TestStreamRefusals(t *testing.T) {
	e := newEnv(t, "memory")
	e.lockedModel("tenant-a", "order")
	sub := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
	cases := []struct {
		name  string
		token string
		a     changes.Attach
		code  codes.Code
	}{
		{"no token", "", changes.Attach{SubscriptionID: sub.ID}, codes.Unauthenticated},
		{"bad token", "not-a-token", changes.Attach{SubscriptionID: sub.ID}, codes.Unauthenticated},
		{"no role", e.tokUser, changes.Attach{SubscriptionID: sub.ID}, codes.PermissionDenied},
		{"other tenant", e.tokB, changes.Attach{SubscriptionID: sub.ID}, codes.NotFound},
		{"unknown id", e.tokA, changes.Attach{SubscriptionID: "nope"}, codes.NotFound},
		{"no id", e.tokA, changes.Attach{}, codes.InvalidArgument},
		{"bad cursor", e.tokA, changes.Attach{SubscriptionID: sub.ID, ResumeAfter: "x"}, codes.InvalidArgument},
		{"bad window", e.tokA, changes.Attach{SubscriptionID: sub.ID, Window: changes.MaxWindow + 1}, codes.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := e.open(c.token, c.a)
			if status.Code(err) != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
		})
	}
	t.Run("ack past the last event sent", func(t *testing.T) {
		s, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
		if err != nil {
			t.Fatal(err)
		}
		s.ack("999999-999999")
		if err := s.end(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("not an ack", func(t *testing.T) {
		s, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := wire.New("test", changes.TypeAttachRequest, changes.Attach{SubscriptionID: sub.ID})
		if err := s.s.Send(msg); err != nil {
			t.Fatal(err)
		}
		if err := s.end(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("got %v", err)
		}
	})
}

// TestStreamWindow: with window 3 and no acks the server sends three
// events and waits, while the writes go on unhindered and another
// subscriber of the model receives every event; each ack releases as
// many events as it acknowledged.
func TestStreamWindow(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine)
			key := e.lockedModel("tenant-a", "order")
			slow := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
			fast := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
			s, at, err := e.open(e.tokA, changes.Attach{SubscriptionID: slow.ID, Window: 3})
			if err != nil {
				t.Fatal(err)
			}
			if at.Window != 3 {
				t.Fatalf("window %d", at.Window)
			}
			f, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: fast.ID})
			if err != nil {
				t.Fatal(err)
			}
			const n = 10
			var want []string
			for i := range n {
				_, evID := e.create("tenant-a", key, i)
				want = append(want, evID)
			}
			// Every write returned while the slow consumer acknowledged
			// nothing; the other subscriber gets all of them.
			var fastGot []changefeed.Event
			for i := range n {
				ev, _ := f.event()
				if ev.EventID != want[i] {
					t.Fatalf("fast consumer event %d: %s, want %s", i, ev.EventID, want[i])
				}
				fastGot = append(fastGot, ev)
			}
			f.ack(fastGot[n-1].Cursor)

			// The slow one: three, then the server waits on the window.
			w0 := int64(0)
			step := func(upTo int) {
				t.Helper()
				await.Until(t, await.Long, func() bool { return s.received() >= upTo && e.door.WindowWaits() > w0 },
					"%d events received and the server waiting on the window", upTo)
				if got := s.received(); got != upTo {
					t.Fatalf("received %d events with the window full, want %d", got, upTo)
				}
				w0 = e.door.WindowWaits()
			}
			step(3)
			var slowGot []changefeed.Event
			for range 3 {
				ev, _ := s.event()
				slowGot = append(slowGot, ev)
			}
			// Acking the second of three frees two places.
			s.ack(slowGot[1].Cursor)
			step(5)
			for range 2 {
				ev, _ := s.event()
				slowGot = append(slowGot, ev)
			}
			// Acking everything so far releases three more; acking each as
			// it comes, the rest.
			s.ack(slowGot[4].Cursor)
			for range n - 5 {
				ev, _ := s.event()
				slowGot = append(slowGot, ev)
				s.ack(ev.Cursor)
			}
			for i := range n {
				if slowGot[i].EventID != want[i] {
					t.Fatalf("slow consumer event %d: %s, want %s", i, slowGot[i].EventID, want[i])
				}
			}
		})
	}
}

// TestStreamEndsOnShutdown: when the node stops, an attached stream gets
// a final EntityChangeCutEvent (SHUTDOWN) and ends Unavailable (clients
// reconnect), with the acks it received stored; the gRPC server's stop
// then returns (no handler is left behind).
func TestStreamEndsOnShutdown(t *testing.T) {
	for _, engine := range []string{"memory", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine)
			key := e.lockedModel("tenant-a", "order")
			sub := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
			s, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID})
			if err != nil {
				t.Fatal(err)
			}
			idle, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID, Window: 1})
			if err != nil {
				t.Fatal(err)
			}
			e.create("tenant-a", key, 1)
			e.create("tenant-a", key, 2)
			ev, _ := s.event()
			s.ack(ev.Cursor)
			// idle holds its window full: it is waiting on an ack.
			if ev, _ := idle.event(); ev.EventID == "" {
				t.Fatal("no event")
			}
			await.Until(t, await.Long, func() bool { return e.storedCursor("tenant-a", sub.ID) == ev.Cursor }, "ack stored")
			e.hub.Stop()
			for _, st := range []*stream{s, idle} {
				var last string
				for {
					m := st.next()
					if m.GetType() == changes.TypeCut {
						var c changes.Cut
						if err := wire.Decode(m, &c); err != nil {
							t.Fatal(err)
						}
						last = c.Reason
						break
					}
				}
				if last != changefeed.CutShutdown {
					t.Fatalf("cut reason %q", last)
				}
				if err := st.end(); status.Code(err) != codes.Unavailable {
					t.Fatalf("ended %v, want Unavailable", err)
				}
			}
			// A new attach is refused Unavailable.
			if _, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID}); status.Code(err) != codes.Unavailable {
				t.Fatalf("attach after stop: %v", err)
			}
			e.srv.Stop()
		})
	}
}

// TestStalledStreamIsCut: a consumer that stops taking messages holds no
// server goroutine beyond Options.Stall, and neither writers nor another
// subscriber wait for it (issue 28 item 4).
//
//   - never reads: a client that attaches and never calls Recv (its flow
//     control window, 64 KiB without BDP growth, fills and the server's
//     send blocks). The server ends the stream UNAVAILABLE with
//     SLOW_CONSUMER; the client, reading at last, gets the events that
//     were in flight and then that status. Before the bound existed the
//     send stayed blocked until the client went away.
//   - never acks: a client that reads but acknowledges nothing holds its
//     window full; the server sends a final EntityChangeCutEvent
//     (SLOW_CONSUMER) and ends UNAVAILABLE. Before, the server waited on
//     the window forever.
func TestStalledStreamIsCut(t *testing.T) {
	const stall = 300 * time.Millisecond
	t.Run("never reads", func(t *testing.T) {
		e := newEnvWith(t, "memory", changes.Options{Stall: stall})
		key := e.lockedModel("tenant-a", "order")
		stalled := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1},"includeBody":"AFTER"}`)
		other := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
		// Its window holds all n events, so it waits for no ack while the
		// test writes (with the default window of 256 it was cut as a slow
		// consumer itself whenever the writes took longer than the stall).
		f, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: other.ID, Window: changes.MaxWindow})
		if err != nil {
			t.Fatal(err)
		}
		// A client connection whose windows stay at 64 KiB, so what it
		// does not read stops the server's sends soon.
		conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(changes.MaxMessageBytes)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+e.tokA))
		defer cancel()
		cs, err := cfpb.NewEntityChangeServiceClient(conn).Stream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := wire.New("test", changes.TypeAttachRequest, changes.Attach{SubscriptionID: stalled.ID, Window: changes.MaxWindow})
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.Send(msg); err != nil {
			t.Fatal(err)
		}
		await.Until(t, await.Long, func() bool { return e.door.Streams() == 2 }, "both streams attached")
		// 400 events of about 2 KiB: far more than the client's window and
		// the server's write quota together.
		big := strings.Repeat("x", 2000)
		const n = 400
		for i := range n {
			if _, err := e.ents.Create(context.Background(), entityActor, key, "JSON", fmt.Appendf(nil, `{"n":%d,"s":%q}`, i, big), 1); err != nil {
				t.Fatal(err)
			}
		}
		// Every write returned; the other subscriber gets every event.
		for range n {
			ev, _ := f.event()
			f.ack(ev.Cursor)
		}
		await.Until(t, await.Long, func() bool { return e.door.Stalls() == 1 && e.door.Streams() == 1 },
			"the stalled stream cut and its goroutine gone (stalls %d, streams %d)", e.door.Stalls(), e.door.Streams())
		got := 0
		for {
			m, err := cs.Recv()
			if err != nil {
				if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), changefeed.CutSlowConsumer) {
					t.Fatalf("ended %v, want UNAVAILABLE %s", err, changefeed.CutSlowConsumer)
				}
				break
			}
			if m.GetType() == changes.TypeEvent {
				got++
			}
		}
		if got == 0 || got >= n {
			t.Fatalf("the stalled client received %d of %d events before the end", got, n)
		}
		// The other stream is still served.
		e.create("tenant-a", key, n)
		f.event()
	})
	t.Run("never acks", func(t *testing.T) {
		e := newEnvWith(t, "memory", changes.Options{Stall: stall})
		key := e.lockedModel("tenant-a", "order")
		sub := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
		s, at, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID, Window: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			e.create("tenant-a", key, i)
		}
		s.event()
		s.event()
		m := s.next()
		if m.GetType() != changes.TypeCut {
			t.Fatalf("message %s after a full window, want %s", m.GetType(), changes.TypeCut)
		}
		var c changes.Cut
		if err := wire.Decode(m, &c); err != nil {
			t.Fatal(err)
		}
		if c.Reason != changefeed.CutSlowConsumer {
			t.Fatalf("cut reason %q", c.Reason)
		}
		if err := s.end(); status.Code(err) != codes.Unavailable {
			t.Fatalf("ended %v, want UNAVAILABLE", err)
		}
		await.Until(t, await.Long, func() bool { return e.door.Streams() == 0 }, "the stream's goroutine gone")
		if got := e.storedCursor("tenant-a", sub.ID); got != at.Cursor {
			t.Fatalf("stored cursor %s moved without an ack (was %s)", got, at.Cursor)
		}
	})
}
