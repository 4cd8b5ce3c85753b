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
