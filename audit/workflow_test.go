package audit

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/workflow"
)

func TestFromWorkflow(t *testing.T) {
	id := uuid.New()
	at := time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	ev := workflow.TransitionAborted(id.String(), "OPEN", "tx", "approve", "a", "b", at)
	out, err := FromWorkflow([]workflow.Event{ev})
	if err != nil || len(out) != 1 {
		t.Fatal(out, err)
	}
	e := out[0]
	if e.EntityID != id || e.Kind != storage.AuditStateMachine || e.Type != workflow.EventTransitionAborted ||
		e.State != "OPEN" || e.Details != ev.Details || string(e.Data) != string(ev.Data) || !e.Time.Equal(at) {
		t.Fatalf("%+v", e)
	}
	// "tx" is no UUID: the commit's transaction fills it in.
	if e.TxID != ([16]byte{}) {
		t.Fatalf("transaction %x from a non-UUID", e.TxID)
	}
	// A run's UUID transaction stays on its events.
	tx := uuid.New()
	out, err = FromWorkflow([]workflow.Event{{Type: "A", EntityID: id.String(), TransactionID: tx.String()},
		{Type: "B", EntityID: id.String(), TransactionID: tx.String()}})
	if err != nil || out[0].TxID != tx || out[1].TxID != tx {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := FromWorkflow([]workflow.Event{{Type: "X", EntityID: "not-a-uuid"}}); err == nil {
		t.Fatal("a malformed entity id was accepted")
	}
}
