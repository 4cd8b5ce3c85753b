package storage

import "context"

// Reading one's own writes (docs/decisions/0015-transactions.md). A request that
// joined an open transaction carries it in its context under PendingKey;
// storage/overlay puts the transaction's buffered writes over what the
// engine answers.

// PendingKey is the context key of a joined request's transaction. It is
// a string because the HTTP layer sets it as a fasthttp user value.
const PendingKey = "svc.txjoin"

// Pending is an open transaction's buffered writes as its joined requests
// see them.
type Pending interface {
	// PendingTenant is the tenant the transaction writes in.
	PendingTenant() string
	// PendingEntities returns the latest buffered revision of every entity
	// of model written in the transaction; a deleted one has Deleted set.
	PendingEntities(model ModelKey) []*Entity
	// PendingEntity returns the buffered revision of id (found false when
	// the transaction did not write it); base is the committed one, or nil.
	PendingEntity(id [16]byte, base *Entity) (e *Entity, found bool)
}

// PendingFrom returns the transaction a request joined in tenant, or nil.
func PendingFrom(ctx context.Context, tenant string) Pending {
	p, _ := ctx.Value(PendingKey).(Pending)
	if p == nil || p.PendingTenant() != tenant {
		return nil
	}
	return p
}
