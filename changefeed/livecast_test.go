package changefeed

import (
	"context"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/memory"
)

// TestLiveKeysCrossNodesUnderALease: node b's live stream makes node a
// record its model (a's Recorder writes the event) while a write to
// another model records nothing; a keeps b's keys while b renews its
// lease and drops them once the lease lapses without a renewal (b died),
// on a moved clock; b's announcement after its last live stream ended
// drops them at once; an announcement older than the last taken from b
// (the bus may reorder) is ignored, and a node ignores its own.
func TestLiveKeysCrossNodesUnderALease(t *testing.T) {
	ctx := context.Background()
	const lease = 20 * time.Second
	clk := &clock{now: time.Now()}
	ents := memory.NewEntities()
	wa := &Watched{}
	a := New(memory.NewSubscriptions(), ents.Changes(), wa, Options{Now: clk.Now})
	rec := NewRecorder(ents, wa, nil)
	var b *Service
	deliver := func(payload []byte) {
		t.Helper()
		if _, err := a.ApplyLive("a", payload); err != nil {
			t.Fatal(err)
		}
	}
	b = New(memory.NewSubscriptions(), memory.NewEntities().Changes(), &Watched{}, Options{Now: clk.Now,
		AnnounceLive: func() { deliver(b.LiveAnnouncement("b", lease, false)) }})
	watched := func() bool { _, ok := wa.lookup("t", order); return ok }
	events := func() int {
		evs, err := ents.Changes().ReadChanges(ctx, storage.ChangeQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	if watched() {
		t.Fatal("a watches order before any live stream")
	}
	detach := b.attachLive("t", order)
	if !watched() {
		t.Fatal("a does not watch order after b's live stream attached")
	}
	other := storage.ModelKey{Name: "other", Version: 1}
	create(t, rec, "t", other, "NEW", `{}`)
	if n := events(); n != 0 {
		t.Fatalf("a write to an unwatched model recorded %d events", n)
	}
	create(t, rec, "t", order, "NEW", `{}`)
	if n := events(); n != 1 {
		t.Fatalf("a write to b's live model recorded %d events, want 1", n)
	}

	// Renewed before it lapses: kept.
	for range 3 {
		clk.add(lease - time.Millisecond)
		a.ExpireLive()
		if !watched() {
			t.Fatal("a dropped b's keys before the lease lapsed")
		}
		deliver(b.LiveAnnouncement("b", lease, false))
	}
	// b dies: no renewal.
	stale := b.LiveAnnouncement("b", lease, false)
	deliver(stale)
	clk.add(lease - time.Millisecond)
	a.ExpireLive()
	if !watched() {
		t.Fatal("a dropped b's keys before the lease lapsed")
	}
	clk.add(time.Millisecond)
	a.ExpireLive()
	if watched() {
		t.Fatal("a still watches b's keys after b's lease lapsed")
	}
	create(t, rec, "t", order, "NEW", `{}`)
	if n := events(); n != 1 {
		t.Fatalf("after the lease lapsed a write recorded an event (%d events)", n)
	}

	// b comes back; its last live stream ends: dropped at once. A late
	// copy of an older announcement does not bring them back.
	deliver(b.LiveAnnouncement("b", lease, false))
	if !watched() {
		t.Fatal("a does not watch order after b announced it again")
	}
	detach()
	if watched() {
		t.Fatal("a still watches order after b's last live stream ended")
	}
	deliver(stale)
	if watched() {
		t.Fatal("an older announcement from b brought its keys back")
	}

	// A node's own announcement (the bus delivers it to the sender too).
	d2 := b.attachLive("t", order)
	defer d2()
	if hello, err := b.ApplyLive("b", b.LiveAnnouncement("b", lease, true)); err != nil || hello {
		t.Fatalf("own hello: answered %v, %v", hello, err)
	}
	if !b.HasLive() || len(b.remote) != 0 {
		t.Fatal("b took its own announcement as another node's")
	}
	// Another node's hello asks for an answer.
	if hello, err := b.ApplyLive("b", a.LiveAnnouncement("a", lease, true)); err != nil || !hello {
		t.Fatalf("a's hello: answered %v, %v", hello, err)
	}
}
