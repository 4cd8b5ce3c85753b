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
	if _, err := FromWorkflow([]workflow.Event{{Type: "X", EntityID: "not-a-uuid"}}); err == nil {
		t.Fatal("a malformed entity id was accepted")
	}
}
