// Package traced wraps the storage and dispatch interfaces so each call is
// a latency sample on /metrics (platform/opmetrics) and, with
// SVC_OTEL_ENABLED, a span of platform/telemetry. It sits between the
// command and the layers it wraps: platform knows no storage or domain
// type, so the decorators live here (docs/ARCHITECTURE.md).
package traced

import (
	"context"
	"time"

	"svc/platform/opmetrics"
	"svc/platform/telemetry"
	"svc/storage"
)

// Storage operations timed, the index into tracedEntities.ops.
const (
	opCommit = iota
	opGet
	opGetAt
	opGetByTx
	opList
	opScan
	opCount
	opCountByState
	nOps
)

var opNames = [nOps]string{"Commit", "Get", "GetAt", "GetByTx", "List", "Scan", "Count", "CountByState"}

// Entities wraps an entity store of the named engine so each main
// operation is a duration sample in m and, with telemetry, a span (a child
// of the request's). With neither (t and m nil) it returns the store
// itself.
func Entities(t *telemetry.T, m *opmetrics.Set, engine string, st storage.Entities) storage.Entities {
	if t == nil && m == nil {
		return st
	}
	e := &tracedEntities{Entities: st, t: t}
	for i, name := range opNames {
		e.ops[i] = m.Storage(engine, name)
	}
	return e
}

// tracedEntities overrides the operations requests spend their time in;
// History and DeleteModel pass through untimed.
type tracedEntities struct {
	storage.Entities
	t   *telemetry.T
	ops [nOps]*opmetrics.Op
}

// call is one timed operation: a value, so timing allocates nothing.
// start is an opmetrics.Now reading: one clock read at each end.
type call struct {
	start int64
	op    *opmetrics.Op
	end   func(error)
}

func (e *tracedEntities) begin(ctx context.Context, op int, tenant string) (context.Context, call) {
	c := call{start: opmetrics.Now(), op: e.ops[op]}
	if e.t != nil {
		ctx, c.end = e.t.StorageOp(ctx, opNames[op], tenant)
	}
	return ctx, c
}

func (c call) done(err error) {
	c.op.Done(c.start, err)
	if c.end != nil {
		c.end(err)
	}
}

func (e *tracedEntities) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	ctx, c := e.begin(ctx, opCommit, tx.Tenant)
	at, err := e.Entities.Commit(ctx, tx)
	c.done(err)
	return at, err
}

func (e *tracedEntities) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	ctx, c := e.begin(ctx, opGet, tenant)
	v, err := e.Entities.Get(ctx, tenant, id)
	c.done(err)
	return v, err
}

func (e *tracedEntities) GetAt(ctx context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	ctx, c := e.begin(ctx, opGetAt, tenant)
	v, err := e.Entities.GetAt(ctx, tenant, id, at)
	c.done(err)
	return v, err
}

func (e *tracedEntities) GetByTx(ctx context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	ctx, c := e.begin(ctx, opGetByTx, tenant)
	v, err := e.Entities.GetByTx(ctx, tenant, id, txID)
	c.done(err)
	return v, err
}

func (e *tracedEntities) List(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	ctx, c := e.begin(ctx, opList, tenant)
	v, err := e.Entities.List(ctx, tenant, model, at, offset, limit)
	c.done(err)
	return v, err
}

func (e *tracedEntities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	ctx, c := e.begin(ctx, opScan, tenant)
	err := e.Entities.Scan(ctx, tenant, model, at, fn)
	c.done(err)
	return err
}

func (e *tracedEntities) Count(ctx context.Context, tenant string, model storage.ModelKey) (int64, error) {
	ctx, c := e.begin(ctx, opCount, tenant)
	v, err := e.Entities.Count(ctx, tenant, model)
	c.done(err)
	return v, err
}

func (e *tracedEntities) CountByState(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	ctx, c := e.begin(ctx, opCountByState, tenant)
	v, err := e.Entities.CountByState(ctx, tenant, model, at)
	c.done(err)
	return v, err
}
