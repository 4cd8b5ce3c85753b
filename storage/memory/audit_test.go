package memory

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestAuditContract(t *testing.T) {
	storagetest.Audit(t, func(*testing.T) (storage.Entities, storage.Audits) {
		s := NewEntities()
		return s, s.Audits()
	})
}

// An event of a kind the record's compact form has no code for is kept
// whole in the side log and still listed in order with the others.
func TestAuditUncodedKind(t *testing.T) {
	s := NewEntities()
	ctx := context.Background()
	id, txID := uuid.New(), uuid.New()
	tx := &storage.Tx{Tenant: "t", ID: txID, User: "u", Writes: []storage.Write{{ID: id, Model: storage.ModelKey{Name: "m", Version: 1}, State: "S", Data: []byte(`{}`)}},
		Audit: []storage.AuditEvent{
			{EntityID: id, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START"},
			{EntityID: id, Kind: "Custom", Type: "X"},
			{EntityID: id, Kind: storage.AuditEntityChange, Type: storage.AuditCreate},
		}}
	if _, err := s.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	evs, _, err := s.Audits().EntityAudit(ctx, "t", id, storage.AuditFilter{}, 0, 10)
	if err != nil || len(evs) != 3 {
		t.Fatalf("%+v %v", evs, err)
	}
	for i, want := range []string{storage.AuditCreate, "X", "STATE_MACHINE_START"} {
		if evs[i].Type != want || evs[i].TxID != txID || evs[i].Seq != 2-i || evs[i].User != "u" {
			t.Fatalf("event %d: %+v", i, evs[i])
		}
	}
}

// The trail a write without a workflow engine records (start, finish,
// change) is kept as one compact event; it reads back as the same three
// events as any other trail, in the store, in the side log, for a later
// update, and beside a near-trio that must stay as written.
func TestAuditTrioReadsBackWhole(t *testing.T) {
	s := NewEntities()
	ctx := context.Background()
	m := storage.ModelKey{Name: "m", Version: 1}
	trio := func(id [16]byte, state, start, change string, finish []byte) []storage.AuditEvent {
		return []storage.AuditEvent{
			{EntityID: id, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: state, Details: start},
			{EntityID: id, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: state, Details: "State machine finished", Data: finish},
			{EntityID: id, Kind: storage.AuditEntityChange, Type: change, State: state},
		}
	}
	a, b, side := uuid.New(), uuid.New(), uuid.New()
	tx1 := uuid.New()
	var evs []storage.AuditEvent
	evs = append(evs, trio(a, "S1", "State machine started", storage.AuditCreate, []byte(`{"success":true}`))...)
	evs = append(evs, trio(b, "S1", "State machine started", storage.AuditCreate, []byte(`{"success":false}`))...)
	evs = append(evs, trio(side, "S0", "Loopback started", storage.AuditUpdate, []byte(`{"success":true}`))...)
	if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t", ID: tx1, User: "u1", AuditSeq: 4, Audit: evs, Writes: []storage.Write{
		{ID: a, Model: m, State: "S1", Data: []byte(`{"x":1}`)},
		{ID: b, Model: m, State: "S1", Data: []byte(`{"x":2}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	tx2 := uuid.New()
	if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t", ID: tx2, User: "u2", Audit: trio(a, "S2", "Loopback started", storage.AuditUpdate, []byte(`{"success":true}`)),
		Writes: []storage.Write{{ID: a, Model: m, State: "S2", Data: []byte(`{"x":3}`), ExpectVersion: 1}}}); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		tx                          [16]byte
		user, typ, state, det, data string
		seq                         int
	}
	check := func(id [16]byte, want []ev) {
		t.Helper()
		got, _, err := s.Audits().EntityAudit(ctx, "t", id, storage.AuditFilter{}, 0, 100)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%d events %+v, %v; want %d", len(got), got, err, len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.EntityID != id || g.TxID != w.tx || g.User != w.user || g.Type != w.typ || g.State != w.state ||
				g.Details != w.det || string(g.Data) != w.data || g.Seq != w.seq || g.Time.IsZero() {
				t.Errorf("event %d: %+v, want %+v", i, g, w)
			}
		}
	}
	check(a, []ev{
		{tx2, "u2", storage.AuditUpdate, "S2", "", "", 2},
		{tx2, "u2", storage.AuditEventFinish, "S2", "State machine finished", `{"success":true}`, 1},
		{tx2, "u2", "STATE_MACHINE_START", "S2", "Loopback started", "", 0},
		{tx1, "u1", storage.AuditCreate, "S1", "", "", 6},
		{tx1, "u1", storage.AuditEventFinish, "S1", "State machine finished", `{"success":true}`, 5},
		{tx1, "u1", "STATE_MACHINE_START", "S1", "State machine started", "", 4},
	})
	check(b, []ev{
		{tx1, "u1", storage.AuditCreate, "S1", "", "", 9},
		{tx1, "u1", storage.AuditEventFinish, "S1", "State machine finished", `{"success":false}`, 8},
		{tx1, "u1", "STATE_MACHINE_START", "S1", "State machine started", "", 7},
	})
	check(side, []ev{
		{tx1, "u1", storage.AuditUpdate, "S0", "", "", 12},
		{tx1, "u1", storage.AuditEventFinish, "S0", "State machine finished", `{"success":true}`, 11},
		{tx1, "u1", "STATE_MACHINE_START", "S0", "Loopback started", "", 10},
	})
	fin, err := s.Audits().FinishedEvent(ctx, "t", a, tx1)
	if err != nil || fin.Seq != 5 || fin.TxID != tx1 {
		t.Fatalf("finished event %+v, %v", fin, err)
	}
}

// Two create trails for one entity in one transaction: the first is kept
// implicitly on the create's revision, the second needs a slot the block
// was not sized for; both read back, newest first.
func TestAuditTwoTrailsOneEntityOneTx(t *testing.T) {
	s := NewEntities()
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	trail := func(id [16]byte) []storage.AuditEvent {
		return []storage.AuditEvent{
			{EntityID: id, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: "S", Details: "State machine started"},
			{EntityID: id, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: "S", Details: "State machine finished", Data: []byte(`{"success":true}`)},
			{EntityID: id, Kind: storage.AuditEntityChange, Type: storage.AuditCreate, State: "S"},
		}
	}
	evs := append(append(trail(a), trail(b)...), trail(a)...)
	txID := uuid.New()
	m := storage.ModelKey{Name: "m", Version: 1}
	if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t", ID: txID, User: "u", Audit: evs, Writes: []storage.Write{
		{ID: a, Model: m, State: "S", Data: []byte(`{}`)}, {ID: b, Model: m, State: "S", Data: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   [16]byte
		seqs []int
	}{{a, []int{8, 7, 6, 2, 1, 0}}, {b, []int{5, 4, 3}}} {
		got, _, err := s.Audits().EntityAudit(ctx, "t", c.id, storage.AuditFilter{}, 0, 100)
		if err != nil || len(got) != len(c.seqs) {
			t.Fatalf("%d events, %v; want %d", len(got), err, len(c.seqs))
		}
		for i, e := range got {
			want := []string{storage.AuditCreate, storage.AuditEventFinish, "STATE_MACHINE_START"}[i%3]
			if e.Seq != c.seqs[i] || e.Type != want || e.TxID != txID || e.User != "u" || e.State != "S" {
				t.Errorf("event %d: %+v, want seq %d type %s", i, e, c.seqs[i], want)
			}
		}
	}
}
