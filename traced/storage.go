// Package traced wraps the storage and dispatch interfaces so each call is
// a span and a duration sample of platform/telemetry. It sits between the
// command and the layers it wraps: platform knows no storage or domain
// type, so the decorators live here (docs/ARCHITECTURE.md).
package traced

import (
	"context"
	"time"

	"svc/platform/telemetry"
	"svc/storage"
)

// Entities wraps an entity store so each main operation is a span (a child
// of the request's) and a duration sample. Without telemetry (t nil) it
// returns the store itself.
func Entities(t *telemetry.T, st storage.Entities) storage.Entities {
	if t == nil {
		return st
	}
	return &tracedEntities{Entities: st, t: t}
}

// tracedEntities overrides the operations requests spend their time in;
// History and DeleteModel pass through untraced.
type tracedEntities struct {
	storage.Entities
	t *telemetry.T
}

func (e *tracedEntities) op(ctx context.Context, name, tenant string) (context.Context, func(error)) {
	return e.t.StorageOp(ctx, name, tenant)
}

func (e *tracedEntities) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	ctx, end := e.op(ctx, "Commit", tx.Tenant)
	at, err := e.Entities.Commit(ctx, tx)
	end(err)
	return at, err
}

func (e *tracedEntities) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	ctx, end := e.op(ctx, "Get", tenant)
	v, err := e.Entities.Get(ctx, tenant, id)
	end(err)
	return v, err
}

func (e *tracedEntities) GetAt(ctx context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	ctx, end := e.op(ctx, "GetAt", tenant)
	v, err := e.Entities.GetAt(ctx, tenant, id, at)
	end(err)
	return v, err
}

func (e *tracedEntities) GetByTx(ctx context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	ctx, end := e.op(ctx, "GetByTx", tenant)
	v, err := e.Entities.GetByTx(ctx, tenant, id, txID)
	end(err)
	return v, err
}

func (e *tracedEntities) List(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	ctx, end := e.op(ctx, "List", tenant)
	v, err := e.Entities.List(ctx, tenant, model, at, offset, limit)
	end(err)
	return v, err
}

func (e *tracedEntities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	ctx, end := e.op(ctx, "Scan", tenant)
	err := e.Entities.Scan(ctx, tenant, model, at, fn)
	end(err)
	return err
}

func (e *tracedEntities) Count(ctx context.Context, tenant string, model storage.ModelKey) (int64, error) {
	ctx, end := e.op(ctx, "Count", tenant)
	v, err := e.Entities.Count(ctx, tenant, model)
	end(err)
	return v, err
}

func (e *tracedEntities) CountByState(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	ctx, end := e.op(ctx, "CountByState", tenant)
	v, err := e.Entities.CountByState(ctx, tenant, model, at)
	end(err)
	return v, err
}
