package changefeed

import (
	"context"
	"testing"
	"time"

	"svc/storage"
)

// await waits for ch, failing after a generous bound (never a timing
// assertion: a loaded machine passes).
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestStalledLiveStreamIsCutOthersKeepGoing: a live consumer that reads
// nothing is cut with SLOW_CONSUMER once its buffer is full; writers never
// wait for it, and a second live consumer and a durable one get every event.
func TestStalledLiveStreamIsCutOthersKeepGoing(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := open(t)
			w := &Watched{}
			svc := New(e.subs, e.log, w, Options{})
			hub := NewHub(svc, HubOptions{Buffer: 4, Poll: time.Hour})
			rec := NewRecorder(e.ents, w, hub.Notify)
			hub.Start()
			defer hub.Stop()
			sub, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1}}`))
			if err != nil {
				t.Fatal(err)
			}
			f := Filter{ModelName: "order", ModelVersion: 1}
			if err := f.Compile("filter"); err != nil {
				t.Fatal(err)
			}
			stalled, err := hub.AttachLive(ctx, "t", &f, BodyNone)
			if err != nil {
				t.Fatal(err)
			}
			defer stalled.Close()
			reader, err := hub.AttachLive(ctx, "t", &f, BodyNone)
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
			got := make(chan Event, 1000)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case ev := <-reader.Events:
						got <- ev
					case <-reader.Done():
						return
					case <-stop:
						return
					}
				}
			}()
			d, err := hub.AttachDurable(ctx, "t", sub.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			// One create at a time, each awaited at the reading consumer: it
			// never has more than one event queued, the stalled one fills up.
			const n = 50
			for i := 0; i < n; i++ {
				create(t, rec, "t", order, "NEW", `{}`)
				await(t, got, "an event at the reading live consumer")
			}
			await(t, stalled.Done(), "the stalled stream to be cut")
			if stalled.Reason() != CutSlowConsumer {
				t.Fatalf("reason %q", stalled.Reason())
			}
			select {
			case <-reader.Done():
				t.Fatalf("the reading consumer was cut: %s", reader.Reason())
			default:
			}
			seen := 0
			for seen < n {
				evs, err := d.Next(ctx, 60*time.Second)
				if err != nil || len(evs) == 0 {
					t.Fatalf("durable: %d of %d, then %v", seen, n, err)
				}
				seen += len(evs)
			}
			if seen != n {
				t.Fatalf("durable got %d events, want %d", seen, n)
			}
		})
	}
}

// TestDurableResumesAfterLastEventID: a stream resumed with the cursor of
// the k-th event gets the events after it, and the subscription's lag
// counts only those.
func TestDurableResumesAfterLastEventID(t *testing.T) {
	ctx := context.Background()
	e := engines(t)["sqlite"](t)
	w := &Watched{}
	svc := New(e.subs, e.log, w, Options{})
	hub := NewHub(svc, HubOptions{Poll: time.Hour})
	rec := NewRecorder(e.ents, w, hub.Notify)
	hub.Start()
	defer hub.Stop()
	sub, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1,"kinds":["CREATE"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		create(t, rec, "t", order, "NEW", `{}`)
	}
	d, err := hub.AttachDurable(ctx, "t", sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := d.Next(ctx, time.Minute)
	d.Close()
	if err != nil || len(evs) != 4 {
		t.Fatalf("first attach: %d events, %v", len(evs), err)
	}
	if g, _ := svc.Get(ctx, "t", sub.ID); g.Lag.Events != 4 {
		t.Fatalf("nothing acknowledged yet, lag %+v", g.Lag)
	}
	d, err = hub.AttachDurable(ctx, "t", sub.ID, evs[1].Cursor)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rest, err := d.Next(ctx, time.Minute)
	if err != nil || len(rest) != 2 || rest[0].EventID != evs[2].EventID {
		t.Fatalf("resumed: %+v %v", rest, err)
	}
	if g, _ := svc.Get(ctx, "t", sub.ID); g.Lag.Events != 2 || g.Cursor != evs[1].Cursor {
		t.Fatalf("acknowledged up to the second: %+v", g)
	}
	if _, err := hub.AttachDurable(ctx, "t", sub.ID, "nonsense"); err == nil {
		t.Fatal("a bad Last-Event-ID was accepted")
	}
	_ = storage.ChangeCursor{}
}
