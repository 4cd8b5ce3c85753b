package storage

import (
	"context"
	"time"
)

// Stored idempotency keys (docs/decisions/0040-idempotency-key.md). A key
// is reserved before a keyed write runs (Reserve, committed on its own so
// every node sees the request in flight), its response is written by
// Commit in the write's own transaction (Tx.Idempotency), and the request
// ends by completing it or, when nothing was committed, releasing it.

// KeyRecord is one stored key of a tenant.
type KeyRecord struct {
	Tenant string
	Key    string
	// Fingerprint identifies the request (a hash of method, path and
	// body); empty until known (a streamed body is hashed as it is read).
	Fingerprint []byte
	// Owner is the attempt that holds the key while it runs.
	Owner [16]byte
	// LeaseUntil bounds the owner's hold: a reservation past it whose
	// attempt committed nothing may be taken over (its node died).
	LeaseUntil time.Time
	CreatedAt  time.Time
	// Done: the attempt finished and Status/Body are its answer.
	Done bool
	// Status and Body are the answer so far: written by every commit of
	// the attempt (0 and nil while nothing committed) and by Complete.
	Status int
	Body   []byte
}

// KeyStamp is the key's part of a transaction: Commit sets the answer so
// far on the key row, and fails with ErrConflict when Owner no longer
// holds the key (its lease expired and another attempt took it), so the
// write and its answer commit together or not at all.
type KeyStamp struct {
	Key        string
	Owner      [16]byte
	Status     int
	Body       []byte
	LeaseUntil time.Time
}

// IdempotencyKeys stores idempotency keys, scoped by tenant.
type IdempotencyKeys interface {
	// Reserve inserts r (Done false, Status 0) unless the tenant holds a
	// live record of r.Key, and returns nil; otherwise it returns that
	// record and changes nothing. A record is not live, and is replaced,
	// when it is done and was created before expiredBefore, or when it is
	// not done, committed nothing (Status 0) and its lease ended before
	// r.CreatedAt.
	Reserve(ctx context.Context, r *KeyRecord, expiredBefore time.Time) (*KeyRecord, error)
	// Complete records the final answer of owner's attempt (and the
	// fingerprint when fp is not empty) and marks the key done; false
	// when owner no longer holds it.
	Complete(ctx context.Context, tenant, key string, owner [16]byte, fp []byte, status int, body []byte) (bool, error)
	// Release deletes owner's reservation when its attempt committed
	// nothing (Status 0), so a retry runs again.
	Release(ctx context.Context, tenant, key string, owner [16]byte) error
	// SweepKeys deletes, across tenants, the records created before
	// before that are done or whose lease ended before before; it returns
	// how many it deleted.
	SweepKeys(ctx context.Context, before time.Time) (int64, error)
}
