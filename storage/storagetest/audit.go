package storagetest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/storage"
)

// finishData is written in an order and spacing a JSON normaliser would
// change: the trail must give back the bytes the engine wrote.
var finishData = []byte(`{"success":true, "note":"as written"}`)

// withAudit adds the events an entity service writes for each write: an
// EntityChange and, unless it deletes, a START/FINISH pair before it.
func withAudit(tx *storage.Tx) *storage.Tx {
	tx.Audit = make([]storage.AuditEvent, 0, 3*len(tx.Writes))
	for i := range tx.Writes {
		w := &tx.Writes[i]
		change := storage.AuditUpdate
		switch {
		case w.Delete:
			tx.Audit = append(tx.Audit, storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditEntityChange, Type: storage.AuditDelete, State: w.State})
			continue
		case w.ExpectVersion == 0:
			change = storage.AuditCreate
		}
		tx.Audit = append(tx.Audit,
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: w.State, Details: "State machine started"},
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: w.State, Details: "State machine finished", Data: finishData},
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditEntityChange, Type: change, State: w.State})
	}
	return tx
}

func types(evs []storage.AuditEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// Audit checks that an engine writes Tx.Audit with the change, in the same
// transaction, and reads it back per tenant. newStore returns an empty
// store and the audit reader over it.
func Audit(t *testing.T, newStore func(t *testing.T) (storage.Entities, storage.Audits)) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "audited", Version: 1}
	all := storage.AuditFilter{}
	newCreate := func(t *testing.T, tenant string) *storage.Tx {
		return withAudit(&storage.Tx{Tenant: tenant, ID: newID(t), User: "alice",
			Writes: []storage.Write{{ID: newID(t), Model: m, State: "CREATED", Data: []byte(`{"a":1}`), Transition: "loopback"}}})
	}

	t.Run("written with the change, newest first", func(t *testing.T) {
		s, a := newStore(t)
		tx1 := newCreate(t, "t1")
		id := tx1.Writes[0].ID
		at1, err := s.Commit(ctx, tx1)
		if err != nil {
			t.Fatal(err)
		}
		tx2 := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "bob",
			Writes: []storage.Write{{ID: id, State: "CREATED", Data: []byte(`{"a":2}`), Transition: "UPDATE", ExpectVersion: 1}}})
		at2, err := s.Commit(ctx, tx2)
		if err != nil {
			t.Fatal(err)
		}
		evs, more, err := a.EntityAudit(ctx, "t1", id, all, 0, 100)
		if err != nil || more {
			t.Fatalf("list: more=%v err=%v", more, err)
		}
		want := []string{"UPDATE", storage.AuditEventFinish, "STATE_MACHINE_START", "CREATE", storage.AuditEventFinish, "STATE_MACHINE_START"}
		if got := types(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("order: got %v want %v", got, want)
		}
		for i, e := range evs {
			tx, at := tx2, at2
			if i >= 3 {
				tx, at = tx1, at1
			}
			if e.TxID != tx.ID || e.User != tx.User || !e.Time.Equal(at) || e.EntityID != id || e.Seq != 2-i%3 {
				t.Fatalf("event %d: %+v (tx %x at %v)", i, e, tx.ID, at)
			}
		}
		if !bytes.Equal(evs[1].Data, finishData) {
			t.Fatalf("finish data %q, want the bytes written %q", evs[1].Data, finishData)
		}
		if evs[0].Data != nil {
			t.Fatalf("EntityChange data = %q, want nil", evs[0].Data)
		}
		fin, err := a.FinishedEvent(ctx, "t1", id, tx1.ID)
		if err != nil || fin.TxID != tx1.ID || fin.Type != storage.AuditEventFinish || fin.State != "CREATED" {
			t.Fatalf("finished: %+v %v", fin, err)
		}
		if _, err := a.FinishedEvent(ctx, "t1", id, newID(t)); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("finished of an unknown tx: %v", err)
		}
	})

	t.Run("filters and paging", func(t *testing.T) {
		s, a := newStore(t)
		tx1 := newCreate(t, "t1")
		id := tx1.Writes[0].ID
		at1, err := s.Commit(ctx, tx1)
		if err != nil {
			t.Fatal(err)
		}
		tx2 := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "bob",
			Writes: []storage.Write{{ID: id, State: "CREATED", Data: []byte(`{"a":2}`), Transition: "UPDATE", ExpectVersion: 1}}})
		at2, err := s.Commit(ctx, tx2)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, f storage.AuditFilter, off, lim int, want []string, wantMore bool) {
			t.Helper()
			evs, more, err := a.EntityAudit(ctx, "t1", id, f, off, lim)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := types(evs); !reflect.DeepEqual(got, want) || more != wantMore {
				t.Fatalf("%s: got %v more=%v, want %v more=%v", name, got, more, want, wantMore)
			}
		}
		check("kind", storage.AuditFilter{Kinds: []string{storage.AuditEntityChange}}, 0, 10, []string{"UPDATE", "CREATE"}, false)
		check("no kind", storage.AuditFilter{Kinds: []string{}}, 0, 10, []string{}, false)
		check("tx", storage.AuditFilter{TxID: &tx1.ID}, 0, 10, []string{"CREATE", storage.AuditEventFinish, "STATE_MACHINE_START"}, false)
		check("from inclusive", storage.AuditFilter{From: at2}, 0, 10, []string{"UPDATE", storage.AuditEventFinish, "STATE_MACHINE_START"}, false)
		check("to exclusive", storage.AuditFilter{To: at2}, 0, 10, []string{"CREATE", storage.AuditEventFinish, "STATE_MACHINE_START"}, false)
		check("empty window", storage.AuditFilter{From: at1.Add(time.Nanosecond), To: at2}, 0, 10, []string{}, false)
		check("page 1", all, 0, 4, []string{"UPDATE", storage.AuditEventFinish, "STATE_MACHINE_START", "CREATE"}, true)
		check("page 2", all, 4, 4, []string{storage.AuditEventFinish, "STATE_MACHINE_START"}, false)
		check("exact page", all, 0, 6, []string{"UPDATE", storage.AuditEventFinish, "STATE_MACHINE_START", "CREATE", storage.AuditEventFinish, "STATE_MACHINE_START"}, false)
		check("past the end", all, 10, 4, []string{}, false)
	})

	t.Run("a failed commit writes no audit events", func(t *testing.T) {
		s, a := newStore(t)
		tx1 := newCreate(t, "t1")
		id := tx1.Writes[0].ID
		if _, err := s.Commit(ctx, tx1); err != nil {
			t.Fatal(err)
		}
		// A duplicate id: the single-create path fails as a whole.
		dup := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "mallory",
			Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: []byte(`{}`)}}})
		if _, err := s.Commit(ctx, dup); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("duplicate create: %v", err)
		}
		// A stale version.
		stale := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "mallory",
			Writes: []storage.Write{{ID: id, State: "CREATED", Data: []byte(`{}`), ExpectVersion: 7}}})
		if _, err := s.Commit(ctx, stale); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale update: %v", err)
		}
		// A failure at the last step before the commit, after every row
		// of a multi-write transaction (creates by COPY, an update) has
		// been sent.
		boom := errors.New("injected")
		big := &storage.Tx{Tenant: "t1", ID: newID(t), User: "mallory",
			Writes: []storage.Write{{ID: id, State: "CREATED", Data: []byte(`{"a":3}`), ExpectVersion: 1}}}
		var fresh [][16]byte
		for i := 0; i < 10; i++ {
			fresh = append(fresh, newID(t))
			big.Writes = append(big.Writes, storage.Write{ID: fresh[i], Model: m, State: "CREATED", Data: []byte(`{}`)})
		}
		withAudit(big)
		fctx := storage.WithFault(ctx, func(step string) error {
			if step == "written" || step == "validated" {
				return boom
			}
			return nil
		})
		if _, err := s.Commit(fctx, big); !errors.Is(err, boom) {
			t.Fatalf("faulted commit: %v", err)
		}
		evs, _, err := a.EntityAudit(ctx, "t1", id, all, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if got := types(evs); !reflect.DeepEqual(got, []string{"CREATE", storage.AuditEventFinish, "STATE_MACHINE_START"}) {
			t.Fatalf("events after failed commits: %v", got)
		}
		for _, e := range evs {
			if e.TxID != tx1.ID {
				t.Fatalf("event of a failed transaction: %+v", e)
			}
		}
		for _, f := range fresh {
			if evs, _, _ := a.EntityAudit(ctx, "t1", f, all, 0, 10); len(evs) != 0 {
				t.Fatalf("events of an uncommitted create: %v", types(evs))
			}
		}
		// The same transaction without the fault commits every event,
		// through the multi-row path.
		at, err := s.Commit(ctx, big)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fresh {
			evs, _, err := a.EntityAudit(ctx, "t1", f, all, 0, 10)
			if err != nil || len(evs) != 3 || !evs[0].Time.Equal(at) || evs[0].TxID != big.ID {
				t.Fatalf("events of a committed create: %+v %v", evs, err)
			}
		}
	})

	t.Run("delete by model records a DELETE per entity", func(t *testing.T) {
		s, a := newStore(t)
		tx1 := newCreate(t, "t1")
		tx2 := newCreate(t, "t1")
		other := newCreate(t, "t2")
		for _, tx := range []*storage.Tx{tx1, tx2, other} {
			if _, err := s.Commit(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
		del := newID(t)
		n, at, err := s.DeleteModel(ctx, "t1", m, del, "carol", nil)
		if err != nil || n != 2 {
			t.Fatalf("delete model: %d %v", n, err)
		}
		for _, tx := range []*storage.Tx{tx1, tx2} {
			evs, _, err := a.EntityAudit(ctx, "t1", tx.Writes[0].ID, storage.AuditFilter{Kinds: []string{storage.AuditEntityChange}}, 0, 10)
			if err != nil || len(evs) != 2 {
				t.Fatalf("after delete model: %+v %v", evs, err)
			}
			e := evs[0]
			if e.Type != storage.AuditDelete || e.TxID != del || e.User != "carol" || !e.Time.Equal(at) || e.State != "CREATED" || e.EntityID != tx.Writes[0].ID {
				t.Fatalf("DELETE event %+v (at %v)", e, at)
			}
		}
		if evs, _, _ := a.EntityAudit(ctx, "t2", other.Writes[0].ID, all, 0, 10); len(evs) != 3 {
			t.Fatalf("another tenant's entity: %v", types(evs))
		}
	})

	t.Run("an event about an entity the transaction does not write", func(t *testing.T) {
		s, a := newStore(t)
		first := newCreate(t, "t1")
		if _, err := s.Commit(ctx, first); err != nil {
			t.Fatal(err)
		}
		y := first.Writes[0].ID
		tx := newCreate(t, "t1")
		tx.Audit = append(tx.Audit, storage.AuditEvent{EntityID: y, Kind: storage.AuditStateMachine, Type: "SCHEDULED_TRANSITION_CANCEL", State: "CREATED"})
		at, err := s.Commit(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := a.EntityAudit(ctx, "t1", y, all, 0, 10)
		if err != nil || len(evs) != 4 || evs[0].Type != "SCHEDULED_TRANSITION_CANCEL" || evs[0].TxID != tx.ID || !evs[0].Time.Equal(at) || evs[0].Seq != 3 {
			t.Fatalf("events of the unwritten entity: %v %v", types(evs), err)
		}
		if evs, _, _ := a.EntityAudit(ctx, "t2", y, all, 0, 10); len(evs) != 0 {
			t.Fatalf("tenant t2 sees them: %v", types(evs))
		}
	})

	t.Run("an event naming its own transaction keeps it", func(t *testing.T) {
		s, a := newStore(t)
		// A segmented workflow run writes its later events in a second
		// transaction; they name the entry one. Both insert paths: one
		// write, and several.
		one := newCreate(t, "t1")
		two := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "alice", Writes: []storage.Write{
			{ID: newID(t), Model: m, State: "CREATED", Data: []byte(`{"a":1}`), Transition: "loopback"},
			{ID: newID(t), Model: m, State: "CREATED", Data: []byte(`{"a":2}`), Transition: "loopback"}}})
		for _, tx := range []*storage.Tx{one, two} {
			entry := newID(t)
			tx.Audit[1].TxID = entry // the FINISH
			tx.Audit[0].TxID = tx.ID // naming the writing transaction is the same as zero
			if _, err := s.Commit(ctx, tx); err != nil {
				t.Fatal(err)
			}
			id := tx.Writes[0].ID
			evs, _, err := a.EntityAudit(ctx, "t1", id, all, 0, 10)
			if err != nil || len(evs) != 3 || evs[1].Type != storage.AuditEventFinish || evs[1].TxID != entry ||
				evs[0].TxID != tx.ID || evs[2].TxID != tx.ID || evs[1].User != "alice" {
				t.Fatalf("%d writes: %v %v", len(tx.Writes), evs, err)
			}
			evs, _, err = a.EntityAudit(ctx, "t1", id, storage.AuditFilter{TxID: &entry}, 0, 10)
			if err != nil || len(evs) != 1 || evs[0].Type != storage.AuditEventFinish {
				t.Fatalf("filtered by the entry transaction: %v %v", types(evs), err)
			}
			if fin, err := a.FinishedEvent(ctx, "t1", id, entry); err != nil || fin.TxID != entry {
				t.Fatalf("finished by the entry transaction: %v %v", fin, err)
			}
			if _, err := a.FinishedEvent(ctx, "t1", id, tx.ID); err == nil {
				t.Fatal("the FINISH is found under the writing transaction too")
			}
		}
		// A transaction continuing another's events under its id starts
		// their sequence after them (Tx.AuditSeq).
		first := newCreate(t, "t1")
		if _, err := s.Commit(ctx, first); err != nil {
			t.Fatal(err)
		}
		id := first.Writes[0].ID
		next := withAudit(&storage.Tx{Tenant: "t1", ID: newID(t), User: "alice", AuditSeq: len(first.Audit),
			Writes: []storage.Write{{ID: id, Model: m, State: "DONE", Data: []byte(`{"a":3}`), Transition: "loopback", ExpectVersion: 1}}})
		for i := range next.Audit {
			if next.Audit[i].Kind == storage.AuditStateMachine {
				next.Audit[i].TxID = first.ID
			}
		}
		if _, err := s.Commit(ctx, next); err != nil {
			t.Fatalf("continuing the entry transaction's events: %v", err)
		}
		evs, _, err := a.EntityAudit(ctx, "t1", id, storage.AuditFilter{TxID: &first.ID}, 0, 10)
		if err != nil || len(evs) != 5 || evs[0].Seq != 4 || evs[0].Type != storage.AuditEventFinish || evs[0].State != "DONE" || evs[4].Seq != 0 {
			t.Fatalf("the entry transaction's events: %v %v", evs, err)
		}
		if fin, err := a.FinishedEvent(ctx, "t1", id, first.ID); err != nil || fin.State != "DONE" {
			t.Fatalf("the continued run's FINISH: %v %v", fin, err)
		}
	})

	t.Run("event times and tenant isolation", func(t *testing.T) {
		s, a := newStore(t)
		tx := newCreate(t, "t1")
		id := tx.Writes[0].ID
		// An event with its own time keeps it (engine events are stamped
		// when they happen, before the commit).
		early := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
		tx.Audit[0].Time = early
		// Text survives whatever it contains.
		odd := `quote " backslash \\ comma , braces {} NULL ünï 😀` + "\n\t"
		tx.Audit[1].Details, tx.Audit[1].State = odd, odd
		tx.Audit[1].Data = []byte(`{"reason":"say \"hi\", {x}","path":"C:\\t","n":null}`)
		if _, err := s.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		evs, _, err := a.EntityAudit(ctx, "t1", id, all, 0, 10)
		if err != nil || len(evs) != 3 || !evs[2].Time.Equal(early) || evs[2].Type != "STATE_MACHINE_START" {
			t.Fatalf("own time: %+v %v", evs, err)
		}
		if evs[1].Details != odd || evs[1].State != odd {
			t.Fatalf("text round trip: %q %q", evs[1].Details, evs[1].State)
		}
		var data, want map[string]any
		if err := json.Unmarshal(evs[1].Data, &data); err != nil {
			t.Fatalf("data %q: %v", evs[1].Data, err)
		}
		json.Unmarshal(tx.Audit[1].Data, &want)
		if !reflect.DeepEqual(data, want) {
			t.Fatalf("data round trip: %v want %v", data, want)
		}
		if evs, more, err := a.EntityAudit(ctx, "t2", id, all, 0, 10); err != nil || len(evs) != 0 || more {
			t.Fatalf("tenant t2 sees t1's events: %v %v", types(evs), err)
		}
		if _, err := a.FinishedEvent(ctx, "t2", id, tx.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("tenant t2 finished lookup: %v", err)
		}
		if _, err := a.FinishedEvent(ctx, "t1", id, tx.ID); err != nil {
			t.Fatalf("tenant t1 finished lookup: %v", err)
		}
	})
}

// WithServiceAudit adds to tx the audit events the entity service writes
// for each of its writes (state machine start and finish, the change), so
// engine benchmarks store what a real create or update stores.
func WithServiceAudit(tx *storage.Tx) *storage.Tx { return withAudit(tx) }
