package entity

import (
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/workflow"
)

// Details of the state-machine events the entity service records around a
// workflow run (docs/decisions/0022-audit-and-messages.md).
const (
	detailsCreateStart     = "State machine started"
	detailsTransitionStart = "Manual transition started"
	detailsLoopbackStart   = "Loopback started"
	detailsFinish          = "State machine finished"
)

var finishData = []byte(`{"success":true}`)

// withAudit fills tx.Audit with the events of its writes, so Commit stores
// them in the same transaction as the change. evs[i], when not nil, holds
// the state-machine events the workflow engine recorded for write i (its
// own START ... FINISH, transitions, criteria, processors); they are
// written as they are, then the EntityChange. A write whose evs[i] is nil
// (evs may be short or nil) took the no-workflow path and records a
// synthetic STATE_MACHINE_START and STATE_MACHINE_FINISH (with the settled
// state), then its EntityChange. Synthetic events carry no time: the store
// stamps them with the commit instant and lists them newest first; the
// engine's keep the instant of its run. Deletes run no workflow and record
// their EntityChange only.
func withAudit(tx *storage.Tx, evs [][]storage.AuditEvent) *storage.Tx {
	need := 3 * len(tx.Writes)
	for _, e := range evs {
		need += len(e)
	}
	if cap(tx.Audit)-len(tx.Audit) < need {
		grown := make([]storage.AuditEvent, len(tx.Audit), len(tx.Audit)+need)
		copy(grown, tx.Audit)
		tx.Audit = grown
	}
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if w.Delete {
			tx.Audit = append(tx.Audit, storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditEntityChange, Type: storage.AuditDelete, State: w.State})
			continue
		}
		change, start := storage.AuditUpdate, detailsLoopbackStart
		switch {
		case w.ExpectVersion == 0:
			change, start = storage.AuditCreate, detailsCreateStart
		case w.Transition != "" && w.Transition != "loopback":
			start = detailsTransitionStart
		}
		if i < len(evs) && evs[i] != nil {
			tx.Audit = append(tx.Audit, evs[i]...)
		} else {
			tx.Audit = append(tx.Audit,
				storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: w.State, Details: start},
				storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: w.State, Details: detailsFinish, Data: finishData},
			)
		}
		tx.Audit = append(tx.Audit, storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditEntityChange, Type: change, State: w.State})
	}
	return tx
}

// abortedEvents are the trail of a collection-update item refused for a
// stale ifMatch (docs/decisions/0015-transactions.md): its run's start and TRANSITION_ABORTED with
// the expected and actual transaction ids. svc refuses the item before
// running the engine, so no other event precedes the abort. They commit
// with the chunk's other items.
func abortedEvents(e *storage.Entity, txID [16]byte, transition, ifMatch string) []storage.AuditEvent {
	start := detailsLoopbackStart
	if transition != "" {
		start = detailsTransitionStart
	}
	if len(ifMatch) >= 2 && ifMatch[0] == '"' && ifMatch[len(ifMatch)-1] == '"' {
		ifMatch = ifMatch[1 : len(ifMatch)-1]
	}
	now := time.Now()
	ab := workflow.TransitionAborted(uuid.UUID(e.ID).String(), e.State, uuid.UUID(txID).String(), transition,
		ifMatch, uuid.UUID(e.TxID).String(), now)
	return []storage.AuditEvent{
		{EntityID: e.ID, Time: now, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: e.State, Details: start},
		{EntityID: e.ID, Time: now, Kind: storage.AuditStateMachine, Type: ab.Type, State: ab.State, Details: ab.Details, Data: ab.Data},
	}
}
