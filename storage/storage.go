// Package storage defines the tenant-scoped persistence interfaces every
// engine implements (storage/memory, storage/postgres). Domain packages
// depend on these interfaces, never on an engine.
package storage

import "errors"

// Sentinel errors engines return; callers test with errors.Is.
var (
	// ErrNotFound: no such record in this tenant.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict: a concurrent writer changed the record first; the caller
	// may retry.
	ErrConflict = errors.New("storage: conflict")
	// ErrExists: a create met an existing record.
	ErrExists = errors.New("storage: already exists")
	// ErrUnavailable: the engine cannot serve now (e.g. no pooled
	// connection in time); retryable.
	ErrUnavailable = errors.New("storage: unavailable")
)

// PoolStats is a snapshot of an engine's connection pool, for /metrics.
type PoolStats struct {
	// Max and Min are the configured bounds (SVC_POSTGRES_MAX_CONNS,
	// SVC_POSTGRES_MIN_CONNS).
	Max, Min int32
	// Total counts open connections, including ones being opened; Idle
	// and InUse split the open ones.
	Total, Idle, InUse int32
	// IdleClosed counts connections closed for staying idle longer than
	// SVC_POSTGRES_MAX_CONN_IDLE_TIME.
	IdleClosed int64
}
