package entity

import "svc/storage"

// Details of the state-machine events the entity service records around a
// workflow run (search-audit-misc.md §4).
const (
	detailsCreateStart     = "State machine started"
	detailsTransitionStart = "Manual transition started"
	detailsLoopbackStart   = "Loopback started"
	detailsFinish          = "State machine finished"
)

var finishData = []byte(`{"success":true}`)

// withAudit fills tx.Audit with the events of its writes, so Commit stores
// them in the same transaction as the change: for every write that ran a
// workflow STATE_MACHINE_START and STATE_MACHINE_FINISH (with the settled
// state), then its EntityChange. The order is the order of events; the
// engine stamps them with the commit instant and lists them newest first.
// Deletes run no workflow and record their EntityChange only.
func withAudit(tx *storage.Tx) *storage.Tx {
	if cap(tx.Audit)-len(tx.Audit) < 3*len(tx.Writes) {
		grown := make([]storage.AuditEvent, len(tx.Audit), len(tx.Audit)+3*len(tx.Writes))
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
		tx.Audit = append(tx.Audit,
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: w.State, Details: start},
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: w.State, Details: detailsFinish, Data: finishData},
			storage.AuditEvent{EntityID: w.ID, Kind: storage.AuditEntityChange, Type: change, State: w.State},
		)
	}
	return tx
}
