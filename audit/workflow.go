package audit

import (
	"fmt"

	"github.com/google/uuid"

	"svc/storage"
	"svc/workflow"
)

// FromWorkflow turns the state-machine events of a workflow run
// (workflow.Outcome.Events) into audit events for storage.Tx.Audit, so the
// engine's steps are written in the transaction of the change. The
// transaction id comes from the Tx on commit; an event's own time is kept.
// When the engine runs inside entity writes, these replace the
// START/FINISH pair entity/audit.go records for the default workflow.
func FromWorkflow(evs []workflow.Event) ([]storage.AuditEvent, error) {
	out := make([]storage.AuditEvent, len(evs))
	for i := range evs {
		e := &evs[i]
		id, err := uuid.Parse(e.EntityID)
		if err != nil {
			return nil, fmt.Errorf("audit: workflow event %s: entity id %q: %w", e.Type, e.EntityID, err)
		}
		out[i] = storage.AuditEvent{EntityID: id, Time: e.Time, Kind: storage.AuditStateMachine, Type: e.Type,
			State: e.State, Details: e.Details, Data: e.Data}
	}
	return out, nil
}
