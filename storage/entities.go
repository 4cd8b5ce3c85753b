package storage

import (
	"context"
	"errors"
	"time"
)

// ErrModified: an If-Match precondition on a write item no longer holds
// (the entity's current transaction id differs). Unlike ErrConflict it is
// not retryable; the caller re-reads.
var ErrModified = errors.New("storage: entity modified since last read")

// Change types of a revision as stored; the API writes them as
// CREATE/UPDATE/DELETE.
const (
	ChangeCreated = "CREATED"
	ChangeUpdated = "UPDATED"
	ChangeDeleted = "DELETED"
)

// Entity is one revision of an entity. Revisions are immutable: a write
// appends a new one. Times are nanoseconds-exact commit instants in UTC.
type Entity struct {
	Tenant string
	ID     [16]byte
	Model  ModelKey
	State  string
	// Data is the document exactly as written (JSON); nil on a tombstone.
	Data []byte
	// Version numbers an entity's revisions from 1.
	Version    int64
	CreatedAt  time.Time // commit instant of the creating transaction
	UpdatedAt  time.Time // commit instant of the transaction that wrote this revision
	TxID       [16]byte
	Transition string
	ChangeType string
	User       string
	Deleted    bool
	// Attribution is set on revisions that recorded it (History reads it).
	Attribution *Attribution
}

// Attribution completes User for a revision's change history
// (docs/decisions/0014-entities.md): the kind of the principal the change is attributed
// to, and the principal that executed it (the system for a scheduled fire,
// which is attributed to the arming user). Revisions written before svc
// recorded it have none, and the history omits both fields.
type Attribution struct {
	UserKind string // user, service or system
	ExecID   string
	ExecKind string
}

// Write is one item of a transaction.
type Write struct {
	ID         [16]byte
	Model      ModelKey
	State      string
	Data       []byte
	Transition string
	// Delete writes a tombstone instead of a document.
	Delete bool
	// ExpectVersion is the version the writer read: 0 creates a new entity
	// (ErrExists if the id is taken). Otherwise the entity's current version
	// must still equal it at commit, else ErrConflict (first committer wins).
	ExpectVersion int64
	// Keyed says the model declares unique keys: the entity's claims
	// become Claims (none when every key is unset), freeing the ones it
	// held. A write of a model without keys touches no claim; a delete
	// always frees the entity's claims (storage/unique.go).
	Keyed  bool
	Claims []Claim
	// Attribution, when set, replaces the transaction's for this write's
	// revision: a joined request's write merged into its owner's commit
	// is attributed to the owner and executed by the joined caller.
	Attribution *Attribution
}

// AttributionOf is what w's revision records: its own attribution, else
// the transaction's.
func (tx *Tx) AttributionOf(w *Write) *Attribution {
	if w.Attribution != nil {
		return w.Attribution
	}
	return tx.Attribution
}

// Tx is one transaction: all of Writes become visible together at one
// commit instant, or none does.
type Tx struct {
	Tenant string
	ID     [16]byte
	User   string
	Writes []Write
	// Attribution, when set, is recorded with every revision of the
	// transaction (shared, not copied: callers must not change it after).
	Attribution *Attribution
	// Audit is written in the same transaction as Writes (storage/audit.go).
	Audit []AuditEvent
	// Tasks arm and cancel scheduled transitions in the same transaction
	// (storage/tasks.go); applied in order after Writes.
	Tasks []TaskOp
	// Changes are the change-feed events of this commit
	// (storage/changes.go), written in its transaction; nil when no
	// subscription watches what it writes.
	Changes []Change
	// AuditSeq is the Seq of Audit's first event (0 for most writes). A
	// transaction whose events continue another's under its transaction
	// id (a workflow run segmented by COMMIT_BEFORE_DISPATCH) starts after
	// the events already written, keeping (entity, transaction, seq)
	// unique and the trail in order.
	AuditSeq int
	// Idempotency, when set, writes the answer of a keyed request on its
	// key in this transaction (storage/idempotency.go).
	Idempotency *KeyStamp
}

// StateCount is the number of live entities of a model in one state.
type StateCount struct {
	Model ModelKey
	State string
	Count int64
}

// Entities stores entities with their full revision history, scoped by
// tenant: a record of tenant A is ErrNotFound for tenant B on every method.
type Entities interface {
	// Commit applies tx atomically and returns its commit instant, which
	// stamps every written revision. On error nothing of tx is visible.
	Commit(ctx context.Context, tx *Tx) (time.Time, error)
	// Get returns the latest revision; ErrNotFound when absent or deleted.
	Get(ctx context.Context, tenant string, id [16]byte) (*Entity, error)
	// GetAt returns the revision live at instant at (inclusive);
	// ErrNotFound before creation or after deletion.
	GetAt(ctx context.Context, tenant string, id [16]byte, at time.Time) (*Entity, error)
	// GetByTx returns the revision written by transaction txID.
	GetByTx(ctx context.Context, tenant string, id [16]byte, txID [16]byte) (*Entity, error)
	// History returns every revision, oldest first, without Data.
	History(ctx context.Context, tenant string, id [16]byte) ([]Entity, error)
	// List returns live entities of a model ordered by id ascending, as of
	// at when non-nil, skipping offset and returning at most limit.
	List(ctx context.Context, tenant string, model ModelKey, at *time.Time, offset, limit int) ([]*Entity, error)
	// Scan calls fn for every live entity of a model (as of at when
	// non-nil) in no particular order; fn must not retain e.Data.
	Scan(ctx context.Context, tenant string, model ModelKey, at *time.Time, fn func(e *Entity) error) error
	// DeleteModel tombstones every live entity of a model in one
	// transaction and returns how many it removed. With changes it also
	// records, in that transaction, one DELETE change event per entity
	// removed (storage/changes.go).
	DeleteModel(ctx context.Context, tenant string, model ModelKey, txID [16]byte, user string, changes *ModelDeleteChanges) (int64, time.Time, error)
	// Count returns the number of live entities of a model.
	Count(ctx context.Context, tenant string, model ModelKey) (int64, error)
	// CountByState returns live counts per state of one model (as of at
	// when non-nil); states with no entity are absent.
	CountByState(ctx context.Context, tenant string, model ModelKey, at *time.Time) ([]StateCount, error)
}

type faultKey struct{}

// WithFault returns a context under which engines call hook between the
// steps of a commit; an error from hook aborts the commit there. Tests use
// it to prove a failure mid-commit leaves nothing half-written.
func WithFault(ctx context.Context, hook func(step string) error) context.Context {
	return context.WithValue(ctx, faultKey{}, hook)
}

// Fault runs the test hook of ctx for step, if any.
func Fault(ctx context.Context, step string) error {
	if h, ok := ctx.Value(faultKey{}).(func(string) error); ok {
		return h(step)
	}
	return nil
}
