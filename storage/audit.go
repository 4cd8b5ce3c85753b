package storage

import (
	"context"
	"time"
)

// Audit event kinds (the API's auditEventType).
const (
	AuditEntityChange = "EntityChange"
	AuditStateMachine = "StateMachine"
	AuditSystem       = "System"
)

// Change types of EntityChange audit events as the API writes them.
const (
	AuditCreate = "CREATE"
	AuditUpdate = "UPDATE"
	AuditDelete = "DELETE"
)

// AuditEventFinish is the StateMachine event type the finished lookup
// returns.
const AuditEventFinish = "STATE_MACHINE_FINISH"

// AuditEvent is one audit record. It is written by Commit in the same
// transaction as the entity change it records (docs/decisions/0015-transactions.md), so a failed
// commit leaves none behind.
type AuditEvent struct {
	EntityID [16]byte
	// TxID is the transaction the event belongs to; engines fill it from
	// Tx.ID on write when it is zero and keep it otherwise (a workflow run
	// segmented by COMMIT_BEFORE_DISPATCH writes its later events in a
	// second transaction, and they still name the entry one).
	TxID [16]byte
	// Time is when the event happened; a zero Time is stamped with the
	// commit instant.
	Time time.Time
	// Seq orders the events of one transaction (their index in Tx.Audit);
	// engines assign it. Events with equal Time list by Seq.
	Seq int
	// Kind is AuditEntityChange or AuditStateMachine.
	Kind string
	// Type is the change type (CREATE/UPDATE/DELETE) of an EntityChange,
	// the eventType of a StateMachine event.
	Type    string
	State   string
	Details string
	// Data is a JSON object, or nil.
	Data []byte
	// User is the acting user; engines fill it from Tx.User on write.
	User string
}

// AuditFilter selects an entity's audit events. Zero fields do not filter.
type AuditFilter struct {
	// Kinds lists the kinds to include; nil means every kind.
	Kinds []string
	// From is inclusive, To exclusive.
	From, To time.Time
	TxID     *[16]byte
}

// Audits reads the audit trail, scoped by tenant: tenant B never sees an
// event of tenant A.
type Audits interface {
	// EntityAudit returns an entity's events matching f, newest first
	// (then by descending Seq), skipping offset and returning at most
	// limit, and whether more follow. An entity with no events gives an
	// empty list, not ErrNotFound.
	EntityAudit(ctx context.Context, tenant string, entityID [16]byte, f AuditFilter, offset, limit int) ([]AuditEvent, bool, error)
	// FinishedEvent returns the STATE_MACHINE_FINISH event of an entity
	// and transaction; ErrNotFound when there is none.
	FinishedEvent(ctx context.Context, tenant string, entityID, txID [16]byte) (*AuditEvent, error)
}

// AuditMatch reports whether e passes f; engines that filter in memory
// share it.
func AuditMatch(e *AuditEvent, f *AuditFilter) bool {
	if f.Kinds != nil {
		ok := false
		for _, k := range f.Kinds {
			if k == e.Kind {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if !f.From.IsZero() && e.Time.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !e.Time.Before(f.To) {
		return false
	}
	if f.TxID != nil && *f.TxID != e.TxID {
		return false
	}
	return true
}
