package changefeed

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite"
)

type engine struct {
	ents storage.Entities
	log  storage.ChangeLog
	subs storage.Subscriptions
}

// engines opens memory and SQLite (PostgreSQL runs the same storage
// conformance suite in storage/postgres; the feed above it is engine-blind).
func engines(t *testing.T) map[string]func(t *testing.T) engine {
	return map[string]func(t *testing.T) engine{
		"memory": func(*testing.T) engine {
			e := memory.NewEntities()
			return engine{e, e.Changes(), memory.NewSubscriptions()}
		},
		"sqlite": func(t *testing.T) engine {
			db, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "svc.db"), AutoMigrate: true,
				BusyTimeout: 5 * time.Second, CacheSizeKiB: 8000})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			return engine{db.Entities(), db.Changes(), db.Subscriptions()}
		},
	}
}

func id(t testing.TB) [16]byte {
	u, err := uuid.NewUUID()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var order = storage.ModelKey{Name: "order", Version: 1}

func create(t *testing.T, ents storage.Entities, tenant string, m storage.ModelKey, state, doc string) ([16]byte, [16]byte) {
	t.Helper()
	tx := &storage.Tx{Tenant: tenant, ID: id(t), Writes: []storage.Write{{ID: id(t), Model: m, State: state, Data: []byte(doc), Transition: "loopback"}}}
	if _, err := ents.Commit(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	return tx.Writes[0].ID, tx.ID
}

func TestBodyPredicateRefusesLifecycleAndFunctionAtAnyDepth(t *testing.T) {
	for _, c := range []struct{ cond, path string }{
		{`{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"X"}`, "filter.bodyPredicate"},
		{`{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":1},
			{"type":"group","operator":"OR","conditions":[{"type":"function","function":{"name":"f"}}]}]}`, "filter.bodyPredicate.conditions[1].conditions[0]"},
		{`{"type":"group","operator":"NOT","conditions":[{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"X"}]}`, "filter.bodyPredicate.conditions[0]"},
	} {
		f := Filter{ModelName: "m", ModelVersion: 1, BodyPredicate: []byte(c.cond)}
		err := f.Compile("filter")
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.BadRequest || !strings.Contains(err.Error(), c.path) {
			t.Fatalf("%s: want 400 naming %s, got %v", c.cond, c.path, err)
		}
	}
	ok := Filter{ModelName: "m", ModelVersion: 1, BodyPredicate: []byte(`{"type":"simple","jsonPath":"$.total","operatorType":"GREATER_THAN","value":10}`)}
	if err := ok.Compile("filter"); err != nil {
		t.Fatal(err)
	}
}

func TestFilterMatch(t *testing.T) {
	f := Filter{ModelName: "order", ModelVersion: 1, Kinds: []string{"UPDATE"}, ToState: "PAID",
		BodyPredicate: []byte(`{"type":"simple","jsonPath":"$.total","operatorType":"GREATER_THAN","value":10}`)}
	if err := f.Compile("filter"); err != nil {
		t.Fatal(err)
	}
	ev := func(kind, to, body string, m storage.ModelKey) *storage.ChangeEvent {
		return &storage.ChangeEvent{Change: storage.Change{Model: m, Kind: kind, ToState: to, BodyAfter: []byte(body)}}
	}
	for _, c := range []struct {
		e    *storage.ChangeEvent
		want bool
	}{
		{ev("UPDATE", "PAID", `{"total":11}`, order), true},
		{ev("UPDATE", "PAID", `{"total":9}`, order), false},
		{ev("CREATE", "PAID", `{"total":11}`, order), false},
		{ev("UPDATE", "NEW", `{"total":11}`, order), false},
		{ev("UPDATE", "PAID", `{"total":11}`, storage.ModelKey{Name: "order", Version: 2}), false},
	} {
		if got := f.Match(c.e); got != c.want {
			t.Errorf("%+v: got %v", c.e, got)
		}
	}
	for _, bad := range []Filter{{ModelVersion: 1}, {ModelName: "m"}, {ModelName: "m", ModelVersion: 1, Kinds: []string{"MOVE"}}} {
		if err := bad.Compile("filter"); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestRecorderWritesEventsWithTheCommit: on each engine, a watched model's
// commits leave one event per (commit, entity) with eventId
// <transactionId>:<entityId>; an unwatched model's and a rolled-back
// commit's leave none.
func TestRecorderWritesEventsWithTheCommit(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := open(t)
			w := &Watched{}
			woke := 0
			rec := NewRecorder(e.ents, w, func() { woke++ })
			svc := New(e.subs, e.log, w, Options{})
			create(t, rec, "t1", order, "NEW", `{"before":"any subscription"}`)
			sub, err := svc.Create(ctx, "t1", []byte(`{"filter":{"modelName":"order","modelVersion":1},"includeBody":"BEFORE_AND_AFTER"}`))
			if err != nil {
				t.Fatal(err)
			}
			start, _ := storage.ParseChangeCursor(sub.Cursor)
			ent, tx1 := create(t, rec, "t1", order, "NEW", `{"total":1}`)
			create(t, rec, "t1", storage.ModelKey{Name: "other", Version: 1}, "NEW", `{}`) // unwatched model
			create(t, rec, "t2", order, "NEW", `{}`)                                       // unwatched tenant
			// Rolled back: a conflict, and a fault after everything was written.
			bad := &storage.Tx{Tenant: "t1", ID: id(t), Writes: []storage.Write{{ID: ent, Model: order, State: "X", Data: []byte(`{}`), ExpectVersion: 9}}}
			if _, err := rec.Commit(ctx, bad); !errors.Is(err, storage.ErrConflict) {
				t.Fatalf("conflict: %v", err)
			}
			tx2 := &storage.Tx{Tenant: "t1", ID: id(t), Writes: []storage.Write{
				{ID: ent, Model: order, State: "PAID", Data: []byte(`{"total":2}`), Transition: "pay", ExpectVersion: 1},
				{ID: ent, Model: order, State: "SHIPPED", Data: []byte(`{"total":3}`), Transition: "auto", ExpectVersion: 1}}}
			if _, err := rec.Commit(ctx, tx2); err != nil {
				t.Fatal(err)
			}
			evs, err := e.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "t1", Model: &order, After: start, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 2 || woke != 2 {
				t.Fatalf("want 2 events and 2 wake-ups, got %d, %d: %+v", len(evs), woke, evs)
			}
			got := EventOf(&evs[1], BodyBeforeAndAter)
			wantID := uuid.UUID(tx2.ID).String() + ":" + uuid.UUID(ent).String()
			if got.EventID != wantID || got.Kind != "UPDATE" || got.FromState != "NEW" || got.ToState != "SHIPPED" || got.TransitionName != "pay" ||
				string(got.BodyBefore) != `{"total":1}` || string(got.BodyAfter) != `{"total":3}` {
				t.Fatalf("cascaded commit's event: %+v", got)
			}
			if first := EventOf(&evs[0], BodyNone); first.EventID != uuid.UUID(tx1).String()+":"+uuid.UUID(ent).String() ||
				first.Kind != "CREATE" || first.BodyAfter != nil {
				t.Fatalf("create event %+v", first)
			}
			// Deleted: nothing is watched again, and commits record nothing.
			if err := svc.Delete(ctx, "t1", sub.ID); err != nil {
				t.Fatal(err)
			}
			if !w.empty() {
				t.Fatal("watched set not emptied")
			}
			create(t, rec, "t1", order, "NEW", `{}`)
			if more, _ := e.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "t1", Model: &order, After: evs[1].Cursor, Limit: 10}); len(more) != 0 {
				t.Fatalf("recorded with nothing watched: %+v", more)
			}
		})
	}
}

func TestSubscriptionLifecycle(t *testing.T) {
	ctx := context.Background()
	e := engines(t)["memory"](t)
	w := &Watched{}
	now := time.Now()
	clock := func() time.Time { return now }
	svc := New(e.subs, e.log, w, Options{Retention: time.Hour, Now: clock})
	rec := NewRecorder(e.ents, w, nil)
	for _, c := range []struct{ body, path string }{
		{`{"filter":{"modelName":"order","modelVersion":1},"consumption":"GROUP"}`, "consumption"},
		{`{"filter":{"modelName":"order","modelVersion":1},"includeBody":"ALL"}`, "includeBody"},
		{`{"filter":{"modelName":"order","modelVersion":1},"ttl":"soon"}`, "ttl"},
		{`{"filter":{"modelName":"order","modelVersion":1},"startFromTimestamp":"2001-01-01T00:00:00Z"}`, "startFromTimestamp"},
		{`{"filter":{"modelName":"order","modelVersion":1},"color":"red"}`, "color"},
	} {
		if _, err := svc.Create(ctx, "t", []byte(c.body)); err == nil || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: want an error naming %s, got %v", c.body, c.path, err)
		}
	}
	sub, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	create(t, rec, "t", order, "NEW", `{}`)
	create(t, rec, "t", order, "NEW", `{}`)
	got, err := svc.Get(ctx, "t", sub.ID)
	if err != nil || got.Lag == nil || got.Lag.Events != 2 || got.Lag.OldestAgeMs == nil {
		t.Fatalf("lag %+v %v", got, err)
	}
	if _, err := svc.Get(ctx, "other", sub.ID); err == nil {
		t.Fatal("another tenant read the subscription")
	}
	if _, err := svc.Patch(ctx, "t", sub.ID, []byte(`{"filter":{"modelName":"x","modelVersion":1}}`)); err == nil || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("patching the filter: %v", err)
	}
	p, err := svc.Patch(ctx, "t", sub.ID, []byte(`{"includeBody":"AFTER","ttl":"2h"}`))
	if err != nil || p.IncludeBody != "AFTER" || p.TTL != "2h" {
		t.Fatalf("patch %+v %v", p, err)
	}
	if x, _ := w.lookup("t", order); !x.body {
		t.Fatal("includeBody AFTER did not reach the watched set")
	}
	// startFromTimestamp within retention replays from then.
	from := now.Add(-time.Minute)
	back, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1},"startFromTimestamp":"`+from.UTC().Format(time.RFC3339Nano)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := svc.Get(ctx, "t", back.ID); g.Lag.Events != 2 {
		t.Fatalf("started in the past: lag %+v", g.Lag)
	}
	list, next, err := svc.List(ctx, "t", "", 1)
	if err != nil || len(list) != 1 || next == "" {
		t.Fatalf("page %+v %q %v", list, next, err)
	}
	if rest, next2, _ := svc.List(ctx, "t", next, 1); len(rest) != 1 || next2 != "" {
		t.Fatalf("second page %+v %q", rest, next2)
	}
	// A subscription nobody attached to within its ttl is swept.
	now = now.Add(3 * time.Hour)
	if err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, "t", sub.ID); err == nil {
		t.Fatal("expired subscription kept")
	}
	if _, err := svc.Get(ctx, "t", back.ID); err != nil {
		t.Fatalf("subscription within its default ttl swept: %v", err)
	}
}
