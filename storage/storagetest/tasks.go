package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"svc/storage"
)

func task(id string, entity [16]byte, state, transition string, at time.Time, timeoutMs *int64) storage.ScheduledTask {
	return storage.ScheduledTask{ID: id, EntityID: entity, SourceState: state, Transition: transition, ScheduledTime: at, TimeoutMs: timeoutMs}
}

func arm(ts ...storage.ScheduledTask) []storage.TaskOp {
	ops := make([]storage.TaskOp, len(ts))
	for i := range ts {
		ops[i] = storage.TaskOp{Task: ts[i]}
	}
	return ops
}

// Tasks checks scheduled tasks: armed and cancelled only through Tx.Tasks,
// atomically with the transaction's writes and audit; read per tenant;
// claimed once. newStore returns an empty store and its task reader.
func Tasks(t *testing.T, newStore func(t *testing.T) (storage.Entities, storage.ScheduledTasks)) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "sched", Version: 1}
	base := time.Now().UTC().Truncate(time.Millisecond)
	ms := func(v int64) *int64 { return &v }

	t.Run("armed with the create, per tenant", func(t *testing.T) {
		s, ts := newStore(t)
		id := newID(t)
		tx := &storage.Tx{Tenant: "t1", ID: newID(t), User: "alice",
			Writes: []storage.Write{{ID: id, Model: m, State: "WAIT", Data: []byte(`{}`), Transition: "loopback"}},
			Tasks:  arm(task("k1", id, "WAIT", "timeout", base.Add(time.Minute), ms(0)), task("k2", id, "WAIT", "later", base.Add(time.Hour), nil))}
		if _, err := s.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		got, err := ts.GetTask(ctx, "t1", "k1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Tenant != "t1" || got.User != "alice" || got.ArmTx != tx.ID || got.EntityID != id || got.SourceState != "WAIT" ||
			got.Transition != "timeout" || !got.ScheduledTime.Equal(base.Add(time.Minute)) || got.TimeoutMs == nil || *got.TimeoutMs != 0 ||
			!got.RedispatchAfter.IsZero() {
			t.Fatalf("task %+v", got)
		}
		if k2, err := ts.GetTask(ctx, "t1", "k2"); err != nil || k2.TimeoutMs != nil {
			t.Fatalf("k2 %+v %v", k2, err)
		}
		if all, err := ts.EntityTasks(ctx, "t1", id); err != nil || len(all) != 2 {
			t.Fatalf("entity tasks %v %v", all, err)
		}
		if _, err := ts.GetTask(ctx, "t2", "k1"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("other tenant get: %v", err)
		}
		if all, err := ts.EntityTasks(ctx, "t2", id); err != nil || len(all) != 0 {
			t.Fatalf("other tenant list %v %v", all, err)
		}
		// The same with the create's audit (another statement on some
		// engines).
		id2 := newID(t)
		tx2 := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "bob",
			Writes: []storage.Write{{ID: id2, Model: m, State: "WAIT", Data: []byte(`{}`), Transition: "loopback"}}})
		tx2.Tasks = arm(task("k3", id2, "WAIT", "timeout", base.Add(time.Minute), ms(7)))
		if _, err := s.Commit(ctx, tx2); err != nil {
			t.Fatal(err)
		}
		if got, err := ts.GetTask(ctx, "t1", "k3"); err != nil || got.User != "bob" || got.ArmTx != tx2.ID || got.EntityID != id2 || *got.TimeoutMs != 7 {
			t.Fatalf("audited create's task %+v %v", got, err)
		}
	})

	t.Run("a failed commit arms nothing", func(t *testing.T) {
		s, ts := newStore(t)
		tx1, _ := create(t, s, "t1", m, `{}`)
		id := tx1.Writes[0].ID
		stale := &storage.Tx{Tenant: "t1", ID: newID(t), User: "u",
			Writes: []storage.Write{{ID: id, State: "WAIT", Data: []byte(`{}`), Transition: "UPDATE", ExpectVersion: 7}},
			Tasks:  arm(task("k", id, "WAIT", "t", base, nil))}
		if _, err := s.Commit(ctx, stale); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale commit: %v", err)
		}
		if _, err := ts.GetTask(ctx, "t1", "k"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("task of a failed commit: %v", err)
		}
	})

	t.Run("re-arm replaces and clears the claim; deletes", func(t *testing.T) {
		s, ts := newStore(t)
		tx1, _ := create(t, s, "t1", m, `{}`)
		id := tx1.Writes[0].ID
		armTx := &storage.Tx{Tenant: "t1", ID: newID(t), User: "u1",
			Writes: []storage.Write{{ID: id, State: "WAIT", Data: []byte(`{}`), Transition: "UPDATE", ExpectVersion: 1}},
			Tasks:  arm(task("k", id, "WAIT", "t", base.Add(-time.Second), nil))}
		if _, err := s.Commit(ctx, armTx); err != nil {
			t.Fatal(err)
		}
		if c, err := ts.ClaimDue(ctx, base, base.Add(time.Minute), 10); err != nil || len(c) != 1 {
			t.Fatalf("claim %v %v", c, err)
		}
		rearm := &storage.Tx{Tenant: "t1", ID: newID(t), User: "u2",
			Writes: []storage.Write{{ID: id, State: "WAIT", Data: []byte(`{"n":1}`), Transition: "loopback", ExpectVersion: 2}},
			Tasks:  arm(task("k", id, "WAIT", "t", base.Add(time.Hour), ms(5)))}
		if _, err := s.Commit(ctx, rearm); err != nil {
			t.Fatal(err)
		}
		got, err := ts.GetTask(ctx, "t1", "k")
		if err != nil || !got.ScheduledTime.Equal(base.Add(time.Hour)) || !got.RedispatchAfter.IsZero() || got.ArmTx != rearm.ID ||
			got.User != "u2" || *got.TimeoutMs != 5 {
			t.Fatalf("re-armed %+v %v", got, err)
		}
		// A conditional delete against the first arming is stale: nothing
		// of its transaction happens, audit included.
		other := newID(t)
		stale := &storage.Tx{Tenant: "t1", ID: newID(t), User: "system",
			Audit: []storage.AuditEvent{{EntityID: other, Kind: storage.AuditStateMachine, Type: "SCHEDULED_TRANSITION_EXPIRE"}},
			Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: "k"}, IfArmTx: armTx.ID}}}
		if _, err := s.Commit(ctx, stale); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale conditional delete: %v", err)
		}
		if _, err := ts.GetTask(ctx, "t1", "k"); err != nil {
			t.Fatalf("task gone after a failed delete: %v", err)
		}
		// The current arming deletes it, with no entity write.
		del := &storage.Tx{Tenant: "t1", ID: newID(t), User: "system",
			Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: "k"}, IfArmTx: rearm.ID}}}
		if _, err := s.Commit(ctx, del); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.GetTask(ctx, "t1", "k"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
		if all, err := ts.EntityTasks(ctx, "t1", id); err != nil || len(all) != 0 {
			t.Fatalf("entity tasks after delete %v %v", all, err)
		}
		// Unconditional deletes of missing tasks are no error; a
		// conditional one is a conflict.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: "k"}}}}); err != nil {
			t.Fatalf("unconditional delete of a missing task: %v", err)
		}
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: "k"}, IfArmTx: rearm.ID}}}); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("conditional delete of a missing task: %v", err)
		}
	})

	t.Run("claim due oldest first, once per stamp", func(t *testing.T) {
		s, ts := newStore(t)
		tx1, _ := create(t, s, "t1", m, `{}`)
		tx2, _ := create(t, s, "t2", m, `{}`)
		a, b := tx1.Writes[0].ID, tx2.Writes[0].ID
		for _, c := range []struct {
			tenant string
			id     [16]byte
			ops    []storage.TaskOp
		}{
			{"t1", a, arm(task("a3", a, "S", "x", base.Add(-1*time.Second), nil), task("a1", a, "S", "y", base.Add(-3*time.Second), nil),
				task("future", a, "S", "z", base.Add(time.Hour), nil))},
			{"t2", b, arm(task("b2", b, "S", "x", base.Add(-2*time.Second), nil), task("b0", b, "S", "y", base, nil))},
		} {
			if _, err := s.Commit(ctx, &storage.Tx{Tenant: c.tenant, ID: newID(t), User: "u",
				Writes: []storage.Write{{ID: c.id, State: "S", Data: []byte(`{}`), Transition: "UPDATE", ExpectVersion: 1}}, Tasks: c.ops}); err != nil {
				t.Fatal(err)
			}
		}
		until := base.Add(30 * time.Second)
		got, err := ts.ClaimDue(ctx, base, until, 3)
		if err != nil {
			t.Fatal(err)
		}
		if ids := taskIDs(got); ids != "a1 b2 a3" {
			t.Fatalf("first claim %s", ids)
		}
		if got[1].Tenant != "t2" || !got[0].RedispatchAfter.Equal(until) {
			t.Fatalf("claimed %+v", got)
		}
		got, _ = ts.ClaimDue(ctx, base, until, 10)
		if ids := taskIDs(got); ids != "b0" {
			t.Fatalf("second claim %s", ids)
		}
		if got, _ = ts.ClaimDue(ctx, base.Add(time.Second), until, 10); len(got) != 0 {
			t.Fatalf("claimed again within the backoff: %s", taskIDs(got))
		}
		if got, _ = ts.ClaimDue(ctx, until, until.Add(time.Minute), 10); taskIDs(got) != "a1 b2 a3 b0" {
			t.Fatalf("after the backoff: %s", taskIDs(got))
		}
		if st, _ := ts.GetTask(ctx, "t1", "a1"); !st.RedispatchAfter.Equal(until.Add(time.Minute)) {
			t.Fatalf("stamp %v", st.RedispatchAfter)
		}
	})

	t.Run("concurrent claimers share nothing", func(t *testing.T) {
		s, ts := newStore(t)
		const n = 60
		for i := 0; i < n; i += 10 {
			tx, _ := create(t, s, "t1", m, `{}`)
			id := tx.Writes[0].ID
			var ops []storage.TaskOp
			for j := i; j < i+10; j++ {
				ops = append(ops, storage.TaskOp{Task: task(fmt.Sprintf("c%02d", j), id, "S", "x", base.Add(-time.Duration(j)*time.Millisecond), nil)})
			}
			if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), User: "u",
				Writes: []storage.Write{{ID: id, State: "S", Data: []byte(`{}`), Transition: "UPDATE", ExpectVersion: 1}}, Tasks: ops}); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, err := ts.ClaimDue(ctx, base, base.Add(time.Minute), 4)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, c := range got {
						seen[c.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(seen) != n {
			t.Fatalf("claimed %d distinct tasks, want %d", len(seen), n)
		}
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("task %s claimed %d times", id, c)
			}
		}
	})
}

func taskIDs(ts []storage.ScheduledTask) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += " "
		}
		s += t.ID
	}
	return s
}
