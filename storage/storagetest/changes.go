package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"svc/storage"
)

// changeTx is a transaction writing w with the change events the change
// feed would ask for.
func changeTx(t *testing.T, tenant string, wantBefore bool, ws ...storage.Write) *storage.Tx {
	tx := &storage.Tx{Tenant: tenant, ID: newID(t), User: "u", Writes: ws}
	for _, w := range ws {
		kind := storage.KindUpdate
		switch {
		case w.ExpectVersion == 0:
			kind = storage.KindCreate
		case w.Delete:
			kind = storage.KindDelete
		}
		c := storage.Change{EntityID: w.ID, Model: w.Model, Kind: kind, ToState: w.State, Transition: w.Transition, WantBefore: wantBefore}
		if !w.Delete {
			c.BodyAfter = w.Data
		}
		tx.Changes = append(tx.Changes, c)
	}
	return tx
}

func readAll(t *testing.T, l storage.ChangeLog, q storage.ChangeQuery) []storage.ChangeEvent {
	t.Helper()
	q.Limit = 1000
	evs, err := l.ReadChanges(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Changes checks the change log: events are written by Commit in the
// change's own transaction (none for a failed or aborted one, none for a
// commit that asks for none), read in cursor order per tenant and model,
// with the state before filled by the engine; head, cursor by time, lag
// and pruning. newStore returns a store and its log; tenants are unique
// per run, so stores may be shared.
func Changes(t *testing.T, newStore func(t *testing.T) (storage.Entities, storage.ChangeLog)) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "feed", Version: 1}
	other := storage.ModelKey{Name: "feed", Version: 2}
	tenant := func(t *testing.T) string { return fmt.Sprintf("cf-%x", newID(t)) }

	t.Run("events of a commit, in order, with states and bodies", func(t *testing.T) {
		s, l := newStore(t)
		tn := tenant(t)
		head, err := l.ChangeHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id := newID(t)
		tx1 := changeTx(t, tn, true, storage.Write{ID: id, Model: m, State: "NEW", Data: []byte(`{"a": 1}`), Transition: "loopback"})
		at1, err := s.Commit(ctx, tx1)
		if err != nil {
			t.Fatal(err)
		}
		tx2 := changeTx(t, tn, true, storage.Write{ID: id, Model: m, State: "PAID", Data: []byte(`{"a":2}`), Transition: "pay", ExpectVersion: 1})
		if _, err := s.Commit(ctx, tx2); err != nil {
			t.Fatal(err)
		}
		tx3 := changeTx(t, tn, true, storage.Write{ID: id, Model: m, Delete: true, ExpectVersion: 2})
		if _, err := s.Commit(ctx, tx3); err != nil {
			t.Fatal(err)
		}
		evs := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: head})
		if len(evs) != 3 {
			t.Fatalf("want 3 events, got %d: %+v", len(evs), evs)
		}
		want := []struct {
			tx                  [16]byte
			kind, from, to, tr  string
			before, after       string
			beforeNil, afterNil bool
		}{
			{tx1.ID, storage.KindCreate, "", "NEW", "loopback", "", `{"a": 1}`, true, false},
			{tx2.ID, storage.KindUpdate, "NEW", "PAID", "pay", `{"a": 1}`, `{"a":2}`, false, false},
			{tx3.ID, storage.KindDelete, "PAID", "PAID", "", `{"a":2}`, "", false, true},
		}
		for i, w := range want {
			e := evs[i]
			if e.Tenant != tn || e.TxID != w.tx || e.EntityID != id || e.Model != m || e.Kind != w.kind || e.FromState != w.from ||
				e.ToState != w.to || e.Transition != w.tr || string(e.BodyBefore) != w.before || string(e.BodyAfter) != w.after ||
				(e.BodyBefore == nil) != w.beforeNil || (e.BodyAfter == nil) != w.afterNil {
				t.Fatalf("event %d: %+v (body before %q after %q)", i, e, e.BodyBefore, e.BodyAfter)
			}
			if i > 0 && !evs[i-1].Cursor.Less(e.Cursor) {
				t.Fatalf("cursors not increasing: %v then %v", evs[i-1].Cursor, e.Cursor)
			}
		}
		if !evs[0].EmittedAt.Equal(at1) {
			t.Fatalf("emitted at %v, commit instant %v", evs[0].EmittedAt, at1)
		}
		// Reading after the second event gives the third alone.
		if rest := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: evs[1].Cursor}); len(rest) != 1 || rest[0].TxID != tx3.ID {
			t.Fatalf("after the second: %+v", rest)
		}
		// The head is at or past the newest event.
		if h, err := l.ChangeHead(ctx); err != nil || h.Less(evs[2].Cursor) {
			t.Fatalf("head %v behind %v (%v)", h, evs[2].Cursor, err)
		}
	})

	t.Run("deleting a model's entities records a DELETE each", func(t *testing.T) {
		s, l := newStore(t)
		tn := tenant(t)
		ids := map[[16]byte]string{}
		for i := 0; i < 3; i++ {
			id := newID(t)
			ids[id] = fmt.Sprintf(`{"i":%d}`, i)
			if _, err := s.Commit(ctx, &storage.Tx{Tenant: tn, ID: newID(t), Writes: []storage.Write{{ID: id, Model: m, State: "S" + fmt.Sprint(i), Data: []byte(ids[id])}}}); err != nil {
				t.Fatal(err)
			}
		}
		// An unwatched delete (nil) records nothing; another model's
		// entities are not touched.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: tn, ID: newID(t), Writes: []storage.Write{{ID: newID(t), Model: other, State: "S", Data: []byte(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
		head, _ := l.ChangeHead(ctx)
		// Failed at its fault step: nothing recorded, nothing deleted.
		fctx := storage.WithFault(ctx, func(string) error { return errors.New("injected") })
		if _, _, err := s.DeleteModel(fctx, tn, m, newID(t), "u", &storage.ModelDeleteChanges{WantBefore: true}); err == nil {
			t.Fatal("a delete failing at its fault step went through")
		}
		txID := newID(t)
		n, at, err := s.DeleteModel(ctx, tn, m, txID, "u", &storage.ModelDeleteChanges{WantBefore: true})
		if err != nil || n != 3 {
			t.Fatalf("delete model: %d %v", n, err)
		}
		evs := readAll(t, l, storage.ChangeQuery{Tenant: tn, After: head})
		if len(evs) != 3 {
			t.Fatalf("%d events for 3 deleted entities: %+v", len(evs), evs)
		}
		for _, e := range evs {
			want, ok := ids[e.EntityID]
			if !ok || e.Kind != storage.KindDelete || e.TxID != txID || e.Model != m || e.FromState == "" || e.ToState != e.FromState ||
				e.Transition != "" || string(e.BodyBefore) != want || e.BodyAfter != nil || !e.EmittedAt.Equal(at) {
				t.Fatalf("event %+v (body before %q, want %q)", e, e.BodyBefore, want)
			}
			delete(ids, e.EntityID)
		}
		// Nothing left: a second delete records nothing.
		if n, _, err := s.DeleteModel(ctx, tn, m, newID(t), "u", &storage.ModelDeleteChanges{}); err != nil || n != 0 {
			t.Fatalf("second delete: %d %v", n, err)
		}
		if more := readAll(t, l, storage.ChangeQuery{Tenant: tn, After: evs[2].Cursor}); len(more) != 0 {
			t.Fatalf("an empty delete recorded %+v", more)
		}
	})

	t.Run("tenant and model scope reads", func(t *testing.T) {
		s, l := newStore(t)
		t1, t2 := tenant(t), tenant(t)
		head, _ := l.ChangeHead(ctx)
		for _, c := range []struct {
			tn string
			m  storage.ModelKey
		}{{t1, m}, {t2, m}, {t1, other}} {
			if _, err := s.Commit(ctx, changeTx(t, c.tn, false, storage.Write{ID: newID(t), Model: c.m, State: "S", Data: []byte(`{}`)})); err != nil {
				t.Fatal(err)
			}
		}
		if evs := readAll(t, l, storage.ChangeQuery{Tenant: t1, Model: &m, After: head}); len(evs) != 1 || evs[0].Tenant != t1 || evs[0].Model != m {
			t.Fatalf("t1/m: %+v", evs)
		}
		if evs := readAll(t, l, storage.ChangeQuery{Tenant: t1, After: head}); len(evs) != 2 {
			t.Fatalf("t1: %+v", evs)
		}
		n := 0
		for _, e := range readAll(t, l, storage.ChangeQuery{After: head}) {
			if e.Tenant == t1 || e.Tenant == t2 {
				n++
			}
		}
		if n != 3 {
			t.Fatalf("all tenants: %d of ours, want 3", n)
		}
	})

	t.Run("failed and unwatched commits write no event", func(t *testing.T) {
		s, l := newStore(t)
		tn := tenant(t)
		head, _ := l.ChangeHead(ctx)
		id := newID(t)
		// No Changes: nothing recorded.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: tn, ID: newID(t), Writes: []storage.Write{{ID: id, Model: m, State: "S", Data: []byte(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
		// A conflict: nothing of the transaction, its event included.
		if _, err := s.Commit(ctx, changeTx(t, tn, false, storage.Write{ID: id, Model: m, State: "X", Data: []byte(`{}`), ExpectVersion: 7})); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("conflict: %v", err)
		}
		// A create of a taken id.
		if _, err := s.Commit(ctx, changeTx(t, tn, false, storage.Write{ID: id, Model: m, State: "X", Data: []byte(`{}`)})); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("exists: %v", err)
		}
		// A commit aborted at each step the engine names, the last one
		// after its events are written: learn the steps on a commit that
		// goes through, then fail one at each.
		var steps []string
		two := func() *storage.Tx {
			return changeTx(t, tn, true, storage.Write{ID: newID(t), Model: m, State: "S", Data: []byte(`{}`)},
				storage.Write{ID: id, Model: m, State: "T", Data: []byte(`{}`), ExpectVersion: 1})
		}
		if _, err := s.Commit(storage.WithFault(ctx, func(s string) error { steps = append(steps, s); return nil }), two()); err != nil {
			t.Fatal(err)
		}
		if evs := readAll(t, l, storage.ChangeQuery{Tenant: tn, After: head}); len(evs) != 2 {
			t.Fatalf("a commit of two writes recorded %d events", len(evs))
		} else {
			head = evs[1].Cursor
		}
		if len(steps) == 0 {
			t.Fatal("the engine names no fault step")
		}
		for _, step := range steps {
			fctx := storage.WithFault(ctx, func(s string) error {
				if s == step {
					return errors.New("injected at " + step)
				}
				return nil
			})
			tx := two()
			tx.Writes[1].ExpectVersion = 2
			if _, err := s.Commit(fctx, tx); err == nil {
				t.Fatalf("commit failing at %q went through", step)
			}
		}
		if evs := readAll(t, l, storage.ChangeQuery{Tenant: tn, After: head}); len(evs) != 0 {
			t.Fatalf("failed commits recorded %+v", evs)
		}
	})

	t.Run("cursor at a time, lag and pruning", func(t *testing.T) {
		s, l := newStore(t)
		tn := tenant(t)
		head, _ := l.ChangeHead(ctx)
		var ats []time.Time
		for i := 0; i < 3; i++ {
			at, err := s.Commit(ctx, changeTx(t, tn, false, storage.Write{ID: newID(t), Model: m, State: "S", Data: []byte(`{}`)}))
			if err != nil {
				t.Fatal(err)
			}
			ats = append(ats, at)
		}
		evs := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: head})
		if len(evs) != 3 {
			t.Fatalf("%d events", len(evs))
		}
		c, err := l.ChangeCursorAt(ctx, tn, m, ats[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: c}); len(got) != 2 || got[0].Cursor != evs[1].Cursor {
			t.Fatalf("from the second instant: %+v", got)
		}
		n, oldest, err := l.ChangeLag(ctx, tn, m, evs[0].Cursor)
		if err != nil || n != 2 || !oldest.Equal(ats[1]) {
			t.Fatalf("lag %d oldest %v (want 2, %v): %v", n, oldest, ats[1], err)
		}
		if n, oldest, err := l.ChangeLag(ctx, tn, m, evs[2].Cursor); err != nil || n != 0 || !oldest.IsZero() {
			t.Fatalf("no lag: %d %v %v", n, oldest, err)
		}
		if _, err := l.PruneChanges(ctx, ats[1], 0); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: head}); len(got) != 2 || got[0].Cursor != evs[1].Cursor {
			t.Fatalf("after pruning: %+v", got)
		}
	})

	t.Run("pruning every event by age never hands a cursor out again", func(t *testing.T) {
		s, l := newStore(t)
		tn := tenant(t)
		for range 2 {
			if _, err := s.Commit(ctx, changeTx(t, tn, false, storage.Write{ID: newID(t), Model: m, State: "S", Data: []byte(`{}`)})); err != nil {
				t.Fatal(err)
			}
		}
		last, err := l.ChangeHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.PruneChanges(ctx, time.Now().Add(time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		if h, err := l.ChangeHead(ctx); err != nil || h.Less(last) {
			t.Fatalf("head %v after pruning everything, was %v: %v", h, last, err)
		}
		if _, err := s.Commit(ctx, changeTx(t, tn, false, storage.Write{ID: newID(t), Model: m, State: "S", Data: []byte(`{}`)})); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, l, storage.ChangeQuery{Tenant: tn, Model: &m, After: last})
		if len(got) != 1 || !last.Less(got[0].Cursor) {
			t.Fatalf("after pruning everything, a new event reads %+v after the old head %v", got, last)
		}
	})

	t.Run("pruning keeps the newest events of each tenant and model", func(t *testing.T) {
		s, l := newStore(t)
		t1, t2 := tenant(t), tenant(t)
		head, _ := l.ChangeHead(ctx)
		for i := 0; i < 5; i++ {
			for _, c := range []struct {
				tn string
				m  storage.ModelKey
			}{{t1, m}, {t1, other}, {t2, m}} {
				if i >= 2 && c.tn == t2 {
					continue // t2 has 2 events, under the ceiling
				}
				if _, err := s.Commit(ctx, changeTx(t, c.tn, false, storage.Write{ID: newID(t), Model: c.m, State: "S", Data: []byte(`{}`)})); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := readAll(t, l, storage.ChangeQuery{Tenant: t1, Model: &m, After: head})
		if len(before) != 5 {
			t.Fatalf("%d events before pruning", len(before))
		}
		// An instant long past prunes nothing by age; the ceiling of 3
		// leaves each key its 3 newest.
		if _, err := l.PruneChanges(ctx, time.Unix(0, 1), 3); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, l, storage.ChangeQuery{Tenant: t1, Model: &m, After: head})
		if len(got) != 3 || got[0].Cursor != before[2].Cursor || got[2].Cursor != before[4].Cursor {
			t.Fatalf("t1/m after pruning to 3: %d events %+v", len(got), got)
		}
		if got := readAll(t, l, storage.ChangeQuery{Tenant: t1, Model: &other, After: head}); len(got) != 3 {
			t.Fatalf("t1/other after pruning to 3: %d events", len(got))
		}
		if got := readAll(t, l, storage.ChangeQuery{Tenant: t2, Model: &m, After: head}); len(got) != 2 {
			t.Fatalf("t2/m (under the ceiling) after pruning: %d events", len(got))
		}
		if n, _, err := l.ChangeLag(ctx, t1, m, head); err != nil || n != 3 {
			t.Fatalf("lag after pruning: %d %v", n, err)
		}
	})
}

// SubscriptionStore checks the subscription store: per-tenant CRUD, paging
// by id, the cursor only moving forward.
func SubscriptionStore(t *testing.T, newStore func(t *testing.T) storage.Subscriptions) {
	ctx := context.Background()
	s := newStore(t)
	tn := fmt.Sprintf("cs-%x", newID(t))
	now := time.Now().UTC().Truncate(time.Microsecond)
	sub := storage.Subscription{Tenant: tn, ID: "b", Model: storage.ModelKey{Name: "m", Version: 1}, IncludeBody: "AFTER",
		Spec: []byte(`{"x":1}`), Cursor: storage.ChangeCursor{Hi: 5, Lo: 7}, CreatedAt: now, AttachedAt: now}
	if err := s.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSubscription(ctx, &sub); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	a := sub
	a.ID = "a"
	if err := s.CreateSubscription(ctx, &a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSubscription(ctx, tn, "b")
	if err != nil || got.Model != sub.Model || got.IncludeBody != "AFTER" || string(got.Spec) != `{"x":1}` || got.Cursor != sub.Cursor ||
		!got.CreatedAt.Equal(now) || !got.AttachedAt.Equal(now) {
		t.Fatalf("get %+v %v", got, err)
	}
	if _, err := s.GetSubscription(ctx, tn+"x", "b"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant: %v", err)
	}
	if l, err := s.ListSubscriptions(ctx, tn, "", 1); err != nil || len(l) != 1 || l[0].ID != "a" {
		t.Fatalf("page 1 %+v %v", l, err)
	}
	if l, err := s.ListSubscriptions(ctx, tn, "a", 10); err != nil || len(l) != 1 || l[0].ID != "b" {
		t.Fatalf("page 2 %+v %v", l, err)
	}
	if all, err := s.AllSubscriptions(ctx); err != nil || len(all) < 2 {
		t.Fatalf("all %d %v", len(all), err)
	}
	upd := sub
	upd.IncludeBody, upd.Spec = "NONE", []byte(`{"x":2}`)
	if err := s.UpdateSubscription(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Second)
	if err := s.AckSubscription(ctx, tn, "b", storage.ChangeCursor{Hi: 5, Lo: 9}, later); err != nil {
		t.Fatal(err)
	}
	// Backwards: the cursor stays, the attach time moves.
	if err := s.AckSubscription(ctx, tn, "b", storage.ChangeCursor{Hi: 4, Lo: 100}, later.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSubscription(ctx, tn, "b")
	if got.IncludeBody != "NONE" || string(got.Spec) != `{"x":2}` || got.Cursor != (storage.ChangeCursor{Hi: 5, Lo: 9}) || !got.AttachedAt.Equal(later.Add(time.Second)) {
		t.Fatalf("after update and acks %+v", got)
	}
	if err := s.AckSubscription(ctx, tn, "zz", storage.ChangeCursor{}, later); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("ack absent: %v", err)
	}
	if err := s.DeleteSubscription(ctx, tn, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSubscription(ctx, tn, "b"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.UpdateSubscription(ctx, &upd); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update absent: %v", err)
	}
}
