package entity

import (
	"context"

	"svc/idempotency"
	"svc/storage"
)

// A keyed request (an Idempotency-Key, docs/decisions/0040-idempotency-key.md)
// stores its answer so far with each of its transactions: the progress
// function of its context says what that answer is once the transaction
// being committed is durable, and the claim's encoder (the adapter's)
// turns it into the status and body stored. Requests without a key carry
// no claim and pay one context lookup per transaction.

// Updated is the progress of a single update or transition: the
// transaction the answer names and the entity.
type Updated struct {
	TxID [16]byte
	ID   [16]byte
}

type progressKey struct{}

// progressFn is a request's progress once the transaction txID writing
// ids commits: a *Result (creates), a *StreamResult (streamed creates)
// or an Updated.
type progressFn func(txID [16]byte, ids [][16]byte) any

// withProgress sets fn on a keyed request's context; others are returned
// as they are.
func withProgress(ctx context.Context, fn progressFn) context.Context {
	if idempotency.ClaimFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, fn)
}

// stamp puts the key's part on tx when ctx is a keyed request's own (not
// a joined one's: those commit with their owner) and says what its
// answer is.
func stamp(ctx context.Context, tx *storage.Tx, txID [16]byte, ids [][16]byte) {
	c := idempotency.ClaimFrom(ctx)
	if c == nil || joinedFrom(ctx) != nil {
		return
	}
	fn, _ := ctx.Value(progressKey{}).(progressFn)
	if fn == nil {
		return
	}
	tx.Idempotency = c.Stamp(fn(txID, ids))
}
