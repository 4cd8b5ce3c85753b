package audit

import (
	"fmt"

	"github.com/google/uuid"

	"svc/storage"
	"svc/workflow"
)

// FromWorkflow turns the state-machine events of a workflow run
// (workflow.Outcome.Events) into audit events for storage.Tx.Audit, so the
// engine's steps are written in the transaction of the change. An event
// keeps the run's (entry) transaction id when it is a UUID, so the events a
// COMMIT_BEFORE_DISPATCH run writes in its second transaction still name
// the entry one; otherwise the id comes from the Tx on commit. An event's
// own time is kept.
// When the engine runs inside entity writes, these replace the
// START/FINISH pair entity/audit.go records for the default workflow.
func FromWorkflow(evs []workflow.Event) ([]storage.AuditEvent, error) {
	out := make([]storage.AuditEvent, len(evs))
	var txText string
	var txID [16]byte
	for i := range evs {
		e := &evs[i]
		id, err := uuid.Parse(e.EntityID)
		if err != nil {
			return nil, fmt.Errorf("audit: workflow event %s: entity id %q: %w", e.Type, e.EntityID, err)
		}
		// Every event of a run names the same transaction: parse it once.
		if e.TransactionID != txText {
			txText, txID = e.TransactionID, [16]byte{}
			if t, err := uuid.Parse(e.TransactionID); err == nil {
				txID = t
			}
		}
		out[i] = storage.AuditEvent{EntityID: id, TxID: txID, Time: e.Time, Kind: storage.AuditStateMachine, Type: e.Type,
			State: e.State, Details: e.Details, Data: e.Data}
	}
	return out, nil
}
