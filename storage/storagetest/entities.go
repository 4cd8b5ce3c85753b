package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

func newID(t testing.TB) [16]byte {
	id, err := uuid.NewUUID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func create(t *testing.T, s storage.Entities, tenant string, m storage.ModelKey, data string) (*storage.Tx, time.Time) {
	t.Helper()
	tx := &storage.Tx{Tenant: tenant, ID: newID(t), User: "u1",
		Writes: []storage.Write{{ID: newID(t), Model: m, State: "CREATED", Data: []byte(data), Transition: "loopback"}}}
	at, err := s.Commit(context.Background(), tx)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return tx, at
}

func update(s storage.Entities, tenant string, id [16]byte, expect int64, state, data string) (*storage.Tx, time.Time, error) {
	tx := &storage.Tx{Tenant: tenant, ID: uuid.Must(uuid.NewUUID()), User: "u2",
		Writes: []storage.Write{{ID: id, State: state, Data: []byte(data), Transition: "UPDATE", ExpectVersion: expect}}}
	at, err := s.Commit(context.Background(), tx)
	return tx, at, err
}

// Entities checks a storage.Entities implementation. newStore returns an
// empty store.
func Entities(t *testing.T, newStore func(t *testing.T) storage.Entities) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "order", Version: 1}

	t.Run("create get revisions point in time", func(t *testing.T) {
		s := newStore(t)
		tx1, t1 := create(t, s, "t1", m, `{"a":1,"n":12345678901234567890.5}`)
		id := tx1.Writes[0].ID
		e, err := s.Get(ctx, "t1", id)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Data) != `{"a":1,"n":12345678901234567890.5}` || e.Version != 1 || e.State != "CREATED" ||
			e.TxID != tx1.ID || e.Model != m || !e.CreatedAt.Equal(t1) || !e.UpdatedAt.Equal(t1) ||
			e.ChangeType != storage.ChangeCreated || e.Transition != "loopback" || e.Deleted {
			t.Fatalf("after create: %+v (commit %v)", e, t1)
		}
		// The store keeps its own copy: callers reuse their buffers.
		for i := range tx1.Writes[0].Data {
			tx1.Writes[0].Data[i] = 'X'
		}
		if e, _ := s.Get(ctx, "t1", id); string(e.Data) != `{"a":1,"n":12345678901234567890.5}` {
			t.Fatalf("store aliases the caller's buffer: %s", e.Data)
		}
		tx2, t2, err := update(s, "t1", id, 1, "CREATED", `{"a":2}`)
		if err != nil {
			t.Fatal(err)
		}
		if !t2.After(t1) {
			t.Fatalf("second commit %v not after first %v", t2, t1)
		}
		e, _ = s.Get(ctx, "t1", id)
		if string(e.Data) != `{"a":2}` || e.Version != 2 || !e.CreatedAt.Equal(t1) || !e.UpdatedAt.Equal(t2) || e.TxID != tx2.ID || e.ChangeType != storage.ChangeUpdated {
			t.Fatalf("after update: %+v", e)
		}
		// As-at reads are inclusive of the commit instant.
		for _, c := range []struct {
			at   time.Time
			want string
		}{{t1, `{"a":1,"n":12345678901234567890.5}`}, {t2.Add(-time.Nanosecond), `{"a":1,"n":12345678901234567890.5}`}, {t2, `{"a":2}`}, {t2.Add(time.Hour), `{"a":2}`}} {
			got, err := s.GetAt(ctx, "t1", id, c.at)
			if err != nil || string(got.Data) != c.want {
				t.Errorf("as at %v: %v %v", c.at, got, err)
			}
		}
		if _, err := s.GetAt(ctx, "t1", id, t1.Add(-time.Nanosecond)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("before creation: %v", err)
		}
		got, err := s.GetByTx(ctx, "t1", id, tx1.ID)
		if err != nil || got.Version != 1 {
			t.Errorf("by first tx: %+v %v", got, err)
		}
		if _, err := s.GetByTx(ctx, "t1", id, newID(t)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("by unknown tx: %v", err)
		}
		// Delete: tombstone; history keeps everything.
		dtx := &storage.Tx{Tenant: "t1", ID: newID(t), User: "u3", Writes: []storage.Write{{ID: id, Delete: true, ExpectVersion: 2}}}
		t3, err := s.Commit(ctx, dtx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "t1", id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("get after delete: %v", err)
		}
		if _, err := s.GetAt(ctx, "t1", id, t3); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("as at deletion: %v", err)
		}
		if got, err := s.GetAt(ctx, "t1", id, t3.Add(-time.Nanosecond)); err != nil || string(got.Data) != `{"a":2}` {
			t.Errorf("as at before deletion: %v %v", got, err)
		}
		h, err := s.History(ctx, "t1", id)
		if err != nil || len(h) != 3 {
			t.Fatalf("history: %v %v", h, err)
		}
		if h[0].ChangeType != storage.ChangeCreated || h[1].ChangeType != storage.ChangeUpdated || h[2].ChangeType != storage.ChangeDeleted ||
			!h[2].Deleted || h[2].TxID != dtx.ID || h[2].User != "u3" || h[0].User != "u1" || !h[2].UpdatedAt.Equal(t3) {
			t.Errorf("history entries: %+v", h)
		}
		if _, _, err := update(s, "t1", id, 3, "CREATED", `{}`); err == nil {
			t.Error("update of a deleted entity committed")
		}
	})

	t.Run("stale version conflicts and writes nothing", func(t *testing.T) {
		s := newStore(t)
		tx, _ := create(t, s, "t1", m, `{"v":0}`)
		id := tx.Writes[0].ID
		if _, _, err := update(s, "t1", id, 1, "CREATED", `{"v":1}`); err != nil {
			t.Fatal(err)
		}
		// A transaction with a fresh create and a stale update: all or nothing.
		newEnt := newID(t)
		bad := &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{
			{ID: newEnt, Model: m, State: "CREATED", Data: []byte(`{}`)},
			{ID: id, State: "CREATED", Data: []byte(`{"v":"stale"}`), ExpectVersion: 1},
		}}
		if _, err := s.Commit(ctx, bad); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale write: %v", err)
		}
		if _, err := s.Get(ctx, "t1", newEnt); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("half of a failed transaction is visible: %v", err)
		}
		if e, _ := s.Get(ctx, "t1", id); string(e.Data) != `{"v":1}` {
			t.Errorf("stale write applied: %s", e.Data)
		}
		if n, _ := s.Count(ctx, "t1", m); n != 1 {
			t.Errorf("count %d", n)
		}
		// The id of the failed create is free again.
		ok := &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{{ID: newEnt, Model: m, State: "CREATED", Data: []byte(`{}`)}}}
		if _, err := s.Commit(ctx, ok); err != nil {
			t.Errorf("retry after failed tx: %v", err)
		}
		dup := &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{{ID: newEnt, Model: m, State: "CREATED", Data: []byte(`{}`)}}}
		if _, err := s.Commit(ctx, dup); !errors.Is(err, storage.ErrExists) {
			t.Errorf("duplicate create: %v", err)
		}
	})

	t.Run("fault between steps leaves nothing half-written", func(t *testing.T) {
		setup := func() (storage.Entities, [16]byte) {
			s := newStore(t)
			base, _ := create(t, s, "t1", m, `{"v":0}`)
			return s, base.Writes[0].ID
		}
		// One update plus a chunk of creates, large enough for bulk paths.
		mk := func(baseID [16]byte) *storage.Tx {
			w := []storage.Write{{ID: baseID, State: "CREATED", Data: []byte(`{"v":1}`), ExpectVersion: 1}}
			for i := 0; i < 50; i++ {
				w = append(w, storage.Write{ID: newID(t), Model: m, State: "CREATED", Data: []byte(fmt.Sprintf(`{"i":%d}`, i))})
			}
			return &storage.Tx{Tenant: "t1", ID: newID(t), Writes: w}
		}
		var steps []string
		s, baseID := setup()
		probe := storage.WithFault(ctx, func(step string) error { steps = append(steps, step); return nil })
		if _, err := s.Commit(probe, mk(baseID)); err != nil {
			t.Fatal(err)
		}
		if len(steps) == 0 {
			t.Fatal("engine exposes no fault points")
		}
		boom := errors.New("injected fault")
		for _, step := range steps {
			s, baseID = setup()
			bad := mk(baseID)
			fctx := storage.WithFault(ctx, func(s string) error {
				if s == step {
					return boom
				}
				return nil
			})
			if _, err := s.Commit(fctx, bad); !errors.Is(err, boom) {
				t.Fatalf("fault at %q: commit returned %v", step, err)
			}
			if n, _ := s.Count(ctx, "t1", m); n != 1 {
				t.Errorf("fault at %q: %d entities visible, want 1", step, n)
			}
			if e, _ := s.Get(ctx, "t1", baseID); e == nil || e.Version != 1 {
				t.Errorf("fault at %q: base entity changed: %+v", step, e)
			}
			if _, err := s.Get(ctx, "t1", bad.Writes[1].ID); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("fault at %q: created entity visible", step)
			}
			if h, _ := s.History(ctx, "t1", baseID); len(h) != 1 {
				t.Errorf("fault at %q: history has %d revisions", step, len(h))
			}
			// The same transaction commits cleanly afterwards.
			if _, err := s.Commit(ctx, bad); err != nil {
				t.Fatalf("fault at %q: clean retry: %v", step, err)
			}
			if n, _ := s.Count(ctx, "t1", m); n != 51 {
				t.Errorf("after retry: %d", n)
			}
		}
	})

	t.Run("list pagination point in time counts", func(t *testing.T) {
		s := newStore(t)
		other := storage.ModelKey{Name: "order", Version: 2}
		var ids [][16]byte
		for i := 0; i < 7; i++ {
			tx, _ := create(t, s, "t1", m, fmt.Sprintf(`{"i":%d}`, i))
			ids = append(ids, tx.Writes[0].ID)
		}
		create(t, s, "t1", other, `{}`)
		_, mid, _ := update(s, "t1", ids[0], 1, "DONE", `{"i":"zero"}`)
		sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
		var got [][16]byte
		for page := 0; ; page++ {
			l, err := s.List(ctx, "t1", m, nil, page*3, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(l) == 0 {
				break
			}
			for _, e := range l {
				got = append(got, e.ID)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("pages in id order:\n got %x\nwant %x", got, ids)
		}
		if l, _ := s.List(ctx, "t1", m, nil, 100, 3); len(l) != 0 {
			t.Errorf("past the end: %d", len(l))
		}
		if l, _ := s.List(ctx, "t1", storage.ModelKey{Name: "none", Version: 1}, nil, 0, 10); len(l) != 0 {
			t.Errorf("unknown model: %d", len(l))
		}
		if n, _ := s.Count(ctx, "t1", m); n != 7 {
			t.Errorf("count %d", n)
		}
		bs, _ := s.CountByState(ctx, "t1", m, nil)
		if fmt.Sprint(bs) != fmt.Sprint([]storage.StateCount{{Model: m, State: "CREATED", Count: 6}, {Model: m, State: "DONE", Count: 1}}) {
			t.Errorf("by state: %v", bs)
		}
		before := mid.Add(-time.Nanosecond)
		bs, _ = s.CountByState(ctx, "t1", m, &before)
		if fmt.Sprint(bs) != fmt.Sprint([]storage.StateCount{{Model: m, State: "CREATED", Count: 7}}) {
			t.Errorf("by state as at: %v", bs)
		}
		n, at, err := s.DeleteModel(ctx, "t1", m, newID(t), "u9", nil)
		if err != nil || n != 7 {
			t.Fatalf("delete model: %d %v", n, err)
		}
		if c, _ := s.Count(ctx, "t1", m); c != 0 {
			t.Errorf("count after delete %d", c)
		}
		if c, _ := s.Count(ctx, "t1", other); c != 1 {
			t.Errorf("other model touched: %d", c)
		}
		if bs, _ := s.CountByState(ctx, "t1", m, nil); len(bs) != 0 {
			t.Errorf("by state after delete: %v", bs)
		}
		// As of just before the delete, the old page is still there.
		pre := at.Add(-time.Nanosecond)
		l, _ := s.List(ctx, "t1", m, &pre, 0, 100)
		if len(l) != 7 {
			t.Errorf("list as at before delete: %d", len(l))
		}
		var seen int
		s.Scan(ctx, "t1", m, &pre, func(e *storage.Entity) error { seen++; return nil })
		if seen != 7 {
			t.Errorf("scan as at: %d", seen)
		}
		if l, _ := s.List(ctx, "t1", m, &at, 0, 100); len(l) != 0 {
			t.Errorf("list as at delete: %d", len(l))
		}
		if n, _, _ := s.DeleteModel(ctx, "t1", m, newID(t), "u9", nil); n != 0 {
			t.Errorf("second delete removed %d", n)
		}
		// A page read before a write never hides the write from the next read.
		tx, _ := create(t, s, "t1", m, `{"after":1}`)
		if l, _ := s.List(ctx, "t1", m, nil, 0, 100); len(l) != 1 || l[0].ID != tx.Writes[0].ID {
			t.Errorf("list after a new create: %d", len(l))
		}
		dtx := &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{{ID: tx.Writes[0].ID, Delete: true, ExpectVersion: 1}}}
		if _, err := s.Commit(ctx, dtx); err != nil {
			t.Fatal(err)
		}
		if l, _ := s.List(ctx, "t1", m, nil, 0, 100); len(l) != 0 {
			t.Errorf("list after a delete: %d", len(l))
		}
	})

	t.Run("tenant isolation", func(t *testing.T) {
		s := newStore(t)
		tx, _ := create(t, s, "A", m, `{"secret":1}`)
		id := tx.Writes[0].ID
		if _, err := s.Get(ctx, "B", id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B gets A's entity: %v", err)
		}
		if _, err := s.GetAt(ctx, "B", id, time.Now().Add(time.Hour)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B gets A's entity as at: %v", err)
		}
		if _, err := s.GetByTx(ctx, "B", id, tx.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B gets A's entity by tx: %v", err)
		}
		if _, err := s.History(ctx, "B", id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B reads A's history: %v", err)
		}
		if l, _ := s.List(ctx, "B", m, nil, 0, 10); len(l) != 0 {
			t.Errorf("B lists A's entities")
		}
		if n, _ := s.Count(ctx, "B", m); n != 0 {
			t.Errorf("B counts A's entities: %d", n)
		}
		if _, _, err := update(s, "B", id, 1, "X", `{"secret":"stolen"}`); err == nil {
			t.Errorf("B updated A's entity")
		}
		del := &storage.Tx{Tenant: "B", ID: newID(t), Writes: []storage.Write{{ID: id, Delete: true, ExpectVersion: 1}}}
		if _, err := s.Commit(ctx, del); err == nil {
			t.Errorf("B deleted A's entity")
		}
		if n, _, _ := s.DeleteModel(ctx, "B", m, newID(t), "x", nil); n != 0 {
			t.Errorf("B's delete-by-model removed %d of A's", n)
		}
		if e, err := s.Get(ctx, "A", id); err != nil || string(e.Data) != `{"secret":1}` {
			t.Errorf("A's entity changed: %v %v", e, err)
		}
	})

	t.Run("concurrent writers first committer wins", func(t *testing.T) {
		s := newStore(t)
		tx, _ := create(t, s, "t1", m, `{"n":0}`)
		id := tx.Writes[0].ID
		const workers, rounds = 8, 25
		var wins, conflicts atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					e, err := s.Get(ctx, "t1", id)
					if err != nil {
						t.Error(err)
						return
					}
					_, _, err = update(s, "t1", id, e.Version, "CREATED", fmt.Sprintf(`{"n":%d}`, e.Version))
					switch {
					case err == nil:
						wins.Add(1)
					case errors.Is(err, storage.ErrConflict):
						conflicts.Add(1)
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		// Writers of other entities proceed alongside.
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					tx := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), Writes: []storage.Write{
						{ID: uuid.Must(uuid.NewUUID()), Model: storage.ModelKey{Name: "side", Version: 1}, State: "CREATED", Data: []byte(`{}`)}}}
					if _, err := s.Commit(ctx, tx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		e, _ := s.Get(ctx, "t1", id)
		if e.Version != 1+wins.Load() {
			t.Fatalf("version %d after %d winning updates (%d conflicts): a write was lost", e.Version, wins.Load(), conflicts.Load())
		}
		if string(e.Data) != fmt.Sprintf(`{"n":%d}`, e.Version-1) {
			t.Errorf("final data %s", e.Data)
		}
		h, _ := s.History(ctx, "t1", id)
		for i := 1; i < len(h); i++ {
			if !h[i].UpdatedAt.After(h[i-1].UpdatedAt) {
				t.Fatalf("revision times not increasing at %d", i)
			}
		}
		if n, _ := s.Count(ctx, "t1", storage.ModelKey{Name: "side", Version: 1}); n != 4*rounds {
			t.Errorf("side creates: %d", n)
		}
	})
}
