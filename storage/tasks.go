package storage

import (
	"context"
	"time"
)

// ScheduledTask is an armed scheduled transition (docs/decisions/0018-scheduled-transitions.md):
// the transition fires from SourceState at ScheduledTime unless the entity
// moves on first. Its ID is deterministic per (tenant, entity, state,
// transition), so re-arming replaces it.
type ScheduledTask struct {
	Tenant        string
	ID            string
	EntityID      [16]byte
	SourceState   string
	Transition    string
	ScheduledTime time.Time
	// TimeoutMs is the late tolerance; nil means the task never expires.
	TimeoutMs *int64
	// RedispatchAfter is the scheduler's claim: a picked task is not picked
	// again before it. Zero means never picked since it was armed.
	RedispatchAfter time.Time
	// User is the principal whose write armed the task; the fire is
	// attributed to them. Engines fill it from Tx.User.
	User string
	// UserKind is User's kind (Tx.Attribution.UserKind, filled by
	// engines); empty on tasks armed before it was kept.
	UserKind string
	// ArmTx is the transaction that armed it (Tx.ID, filled by engines);
	// conditional deletes compare against it, so a delete based on a stale
	// read never removes a re-armed task.
	ArmTx [16]byte
}

// TaskOp is one change to scheduled tasks, committed atomically with the
// Writes and Audit of its Tx, in order.
type TaskOp struct {
	// Delete removes Task.ID; otherwise Task is upserted (armed or re-armed,
	// its claim cleared).
	Delete bool
	Task   ScheduledTask
	// IfArmTx makes a delete conditional: the task must still be the one
	// armed by this transaction, else the whole Tx fails with ErrConflict.
	// Zero deletes unconditionally (a missing task is no error).
	IfArmTx [16]byte
}

// ScheduledTasks reads scheduled tasks and claims due ones; all changes go
// through Tx.Tasks. Reads are scoped by tenant; ClaimDue spans tenants
// (the scheduler fires every tenant's tasks).
type ScheduledTasks interface {
	// EntityTasks lists an entity's tasks in no particular order.
	EntityTasks(ctx context.Context, tenant string, entityID [16]byte) ([]ScheduledTask, error)
	// GetTask returns a task; ErrNotFound when it does not exist.
	GetTask(ctx context.Context, tenant, id string) (*ScheduledTask, error)
	// ClaimDue picks at most limit tasks with ScheduledTime ≤ now whose
	// RedispatchAfter is zero or ≤ now, oldest ScheduledTime first, stamps
	// their RedispatchAfter with until and returns them as stamped.
	// Concurrent claimers (other scheduler instances on the same database)
	// never receive the same task for the same claim.
	ClaimDue(ctx context.Context, now, until time.Time, limit int) ([]ScheduledTask, error)
}
