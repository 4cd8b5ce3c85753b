package changefeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/storage/pgtest"
	"svc/storage/postgres"
)

// allEngines is engines plus PostgreSQL, each test on a database of its
// own (the log is shared by every tenant of a database).
func allEngines(t *testing.T) map[string]func(t *testing.T) engine {
	m := engines(t)
	m["postgres"] = func(t *testing.T) engine {
		u, drop, err := pgtest.Create("changefeed")
		if err != nil {
			t.Fatal(err)
		}
		db, err := postgres.Open(context.Background(), postgres.Options{URL: u, MaxConns: 8, AutoMigrate: true})
		if err != nil {
			_ = drop()
			t.Fatal(err)
		}
		t.Cleanup(func() {
			db.Close()
			if err := drop(); err != nil {
				t.Log(err)
			}
		})
		return engine{db.Entities(), db.Changes(), db.Subscriptions()}
	}
	return m
}

// clock is a settable svc clock: the tests move it instead of waiting.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSweepBoundsTheLogAndDetaches shows, on every engine, the feed's
// bounds with a moved clock: the backlog ceiling (more unacknowledged
// events than BacklogMaxEvents) detaches a durable subscription, cuts
// its attached consumer (ErrDetached) and leaves the log at most the
// ceiling's newest events of the model; the retention prunes older
// events and detaches a subscription that owed them (BACKLOG_AGE); a
// durable subscription with no consumer past its ttl is deleted while one
// whose consumer stays attached is kept.
func TestSweepBoundsTheLogAndDetaches(t *testing.T) {
	for name, open := range allEngines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := open(t)
			w := &Watched{}
			clk := &clock{now: time.Now()}
			svc := New(e.subs, e.log, w, Options{Retention: time.Hour, BacklogMaxEvents: 3, DefaultTTL: 2 * time.Hour, Now: clk.Now})
			// Touch 1ns: an attached stream checks its subscription on every Next.
			hub := NewHub(svc, HubOptions{Poll: time.Hour, Touch: time.Nanosecond})
			rec := NewRecorder(e.ents, w, hub.Notify)
			hub.Start()
			defer hub.Stop()
			def := []byte(`{"filter":{"modelName":"order","modelVersion":1}}`)
			idle, err := svc.Create(ctx, "t", def)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := svc.Create(ctx, "t", def)
			if err != nil {
				t.Fatal(err)
			}
			d, err := hub.AttachDurable(ctx, "t", kept.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				create(t, rec, "t", order, "NEW", fmt.Sprintf(`{"i":%d}`, i))
			}
			got, err := d.Next(ctx, time.Minute)
			if err != nil || len(got) != 5 {
				t.Fatalf("attached consumer: %d events, %v", len(got), err)
			}

			// The ceiling: 5 unacknowledged events > 3.
			clk.add(time.Second)
			if err := svc.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{idle.ID, kept.ID} {
				g, err := svc.Get(ctx, "t", id)
				if err != nil {
					t.Fatal(err)
				}
				if g.Detached == nil || g.Detached.Reason != DetachedBacklogEvents || g.Detached.Events != 5 {
					t.Fatalf("%s after the sweep: detached %+v", id, g.Detached)
				}
				if g.Lag.Events != 3 {
					t.Fatalf("%s: the log keeps %d of its events, want the ceiling's 3", id, g.Lag.Events)
				}
			}
			if evs, _ := e.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "t", Model: &order, Limit: 100}); len(evs) != 3 || evs[2].Cursor.String() != got[4].Cursor {
				t.Fatalf("the log holds %d events of the model, want the newest 3", len(evs))
			}
			if _, err := d.Next(ctx, time.Minute); !errors.Is(err, ErrDetached) {
				t.Fatalf("attached consumer of a detached subscription: %v, want ErrDetached", err)
			}
			d.Close()
			// It reconnects with Last-Event-ID: acknowledged, attached again.
			clk.add(time.Second)
			d, err = hub.AttachDurable(ctx, "t", kept.ID, got[4].Cursor)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if evs, err := d.Next(ctx, 10*time.Millisecond); err != nil || len(evs) != 0 {
				t.Fatalf("reattached after the last event: %d events, %v", len(evs), err)
			}
			if g, _ := svc.Get(ctx, "t", kept.ID); g.Lag.Events != 0 {
				t.Fatalf("reconnecting acknowledged nothing: lag %+v", g.Lag)
			}

			// The retention: an hour later every event is older than it.
			clk.add(61 * time.Minute)
			if _, err := d.Next(ctx, 10*time.Millisecond); err != nil { // stays attached: touched
				t.Fatal(err)
			}
			if err := svc.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if evs, _ := e.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "t", Model: &order, Limit: 100}); len(evs) != 0 {
				t.Fatalf("the log holds %d events past the retention", len(evs))
			}
			if g, _ := svc.Get(ctx, "t", idle.ID); g.Detached == nil || g.Detached.Reason != DetachedBacklogAge || g.Detached.Events != 3 || g.Lag.Events != 0 {
				t.Fatalf("idle subscription past the retention: %+v lag %+v", g.Detached, g.Lag)
			}
			if g, _ := svc.Get(ctx, "t", kept.ID); g.Detached.Reason != DetachedBacklogEvents {
				t.Fatalf("a subscription that owed nothing was detached again: %+v", g.Detached)
			}

			// The ttl (2h): the idle one had no consumer since it was
			// created; the attached one is touched by its stream.
			clk.add(time.Hour)
			if _, err := d.Next(ctx, 10*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if err := svc.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Get(ctx, "t", idle.ID); err == nil {
				t.Fatal("a subscription with no consumer past its ttl was kept")
			}
			if _, err := svc.Get(ctx, "t", kept.ID); err != nil {
				t.Fatalf("a subscription with its consumer attached was swept: %v", err)
			}
			// Deleted under its consumer: the stream ends.
			if err := svc.Delete(ctx, "t", kept.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Next(ctx, time.Minute); !errors.Is(err, ErrGone) {
				t.Fatalf("consumer of a deleted subscription: %v, want ErrGone", err)
			}
		})
	}
}

// TestDeleteModelRecordsOneDeleteEach: on every engine, deleting all the
// entities of a watched model through the Recorder (what DELETE
// {ctx}/entity/{name}/{version} without a condition does) gives a
// subscriber one DELETE event per entity, from the state it had, in the
// delete's transaction; an unwatched model's delete records nothing.
func TestDeleteModelRecordsOneDeleteEach(t *testing.T) {
	for name, open := range allEngines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := open(t)
			woke := 0
			svc, hub, rec := startDeleteRig(t, e, func() { woke++ })
			sub, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1,"kinds":["DELETE"],
				"bodyPredicate":{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_THAN","value":0}},"includeBody":"BEFORE_AND_AFTER"}`))
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]string{}
			for i := 0; i < 4; i++ {
				ent, _ := create(t, rec, "t", order, fmt.Sprintf("S%d", i), fmt.Sprintf(`{"n":%d}`, i))
				states[uuid.UUID(ent).String()] = fmt.Sprintf("S%d", i)
			}
			create(t, rec, "t", storage.ModelKey{Name: "other", Version: 1}, "NEW", `{"n":5}`)
			woke = 0
			txID := id(t)
			if n, _, err := rec.DeleteModel(ctx, "t", order, txID, "u", nil); err != nil || n != 4 {
				t.Fatalf("delete model: %d %v", n, err)
			}
			if n, _, err := rec.DeleteModel(ctx, "t", storage.ModelKey{Name: "other", Version: 1}, id(t), "u", nil); err != nil || n != 1 {
				t.Fatalf("delete unwatched model: %d %v", n, err)
			}
			if woke != 1 {
				t.Fatalf("the hub was woken %d times, want once (the watched model's delete)", woke)
			}
			evs := nextDurable(t, hub, "t", sub.ID)
			// The body condition ($.n > 0) is tested on the body before.
			if len(evs) != 3 {
				t.Fatalf("%d DELETE events, want 3 (n > 0): %+v", len(evs), evs)
			}
			for _, ev := range evs {
				if ev.Kind != "DELETE" || ev.TransactionID != uuid.UUID(txID).String() || ev.FromState != states[ev.EntityID] ||
					ev.ToState != ev.FromState || ev.BodyBefore == nil || ev.BodyAfter != nil || ev.EventID != ev.TransactionID+":"+ev.EntityID {
					t.Fatalf("event %+v", ev)
				}
			}
			all, _ := e.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "t", Limit: 100})
			for _, ev := range all {
				if ev.Model.Name == "other" {
					t.Fatalf("the unwatched model's delete recorded %+v", ev)
				}
			}
		})
	}
}

// TestSingleDeleteMatchesBodyPredicateOnTheBodyBefore: a single-entity
// DELETE is tested against a body condition on the body it had, as a
// whole-model delete is, whatever bodies the subscription asked for (here
// none): the recorder keeps the body before for the filter.
func TestSingleDeleteMatchesBodyPredicateOnTheBodyBefore(t *testing.T) {
	for name, open := range allEngines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := open(t)
			svc, hub, rec := startDeleteRig(t, e, nil)
			sub, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1,"kinds":["DELETE"],
				"bodyPredicate":{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_THAN","value":0}}}`))
			if err != nil {
				t.Fatal(err)
			}
			zero, _ := create(t, rec, "t", order, "NEW", `{"n":0}`)
			one, _ := create(t, rec, "t", order, "NEW", `{"n":1}`)
			for _, ent := range [][16]byte{zero, one} {
				tx := &storage.Tx{Tenant: "t", ID: id(t), Writes: []storage.Write{{ID: ent, Model: order, Delete: true, ExpectVersion: 1}}}
				if _, err := rec.Commit(ctx, tx); err != nil {
					t.Fatalf("delete: %v", err)
				}
			}
			evs := nextDurable(t, hub, "t", sub.ID)
			if len(evs) != 1 || evs[0].Kind != "DELETE" || evs[0].EntityID != uuid.UUID(one).String() {
				t.Fatalf("want one DELETE event, for the entity with n = 1: %+v", evs)
			}
			if evs[0].BodyBefore != nil || evs[0].BodyAfter != nil {
				t.Fatalf("the subscription asked for no bodies, got %+v", evs[0])
			}
		})
	}
}

// nextDurable attaches to a durable subscription from its stored cursor
// and returns the first events Next gives (waiting up to a minute).
func nextDurable(t *testing.T, hub *Hub, tenant, id string) []Event {
	t.Helper()
	d, err := hub.AttachDurable(context.Background(), tenant, id, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	evs, err := d.Next(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// startDeleteRig is the feed the delete tests run on: a service, a started
// hub (stopped at the end of the test) that polls only when woken, and a
// recorder that wakes it after calling committed (when not nil).
func startDeleteRig(t *testing.T, e engine, committed func()) (*Service, *Hub, *Recorder) {
	t.Helper()
	w := &Watched{}
	svc := New(e.subs, e.log, w, Options{})
	hub := NewHub(svc, HubOptions{Poll: time.Hour})
	rec := NewRecorder(e.ents, w, func() {
		if committed != nil {
			committed()
		}
		hub.Notify()
	})
	hub.Start()
	t.Cleanup(hub.Stop)
	return svc, hub, rec
}
