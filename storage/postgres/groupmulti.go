package postgres

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
)

// insertMany writes a batch of single creates (no tasks) as one statement:
// the entities, their first revisions and their audit events from one
// array per column. PostgreSQL then plans and starts one executor for the
// batch instead of one per create (whose statement runs three inserts):
// 16 % less statement time per create at 16 concurrent creates.
const insertMany = `WITH u AS (
		SELECT * FROM unnest($1::text[], $2::text::uuid[], $3::text[], $4::int[], $5::text[], $6::text::uuid[], $7::text[], $8::bigint[],
			$9::text[], $10::text[], $11::bytea[], $12::text[], $13::text[], $14::text[])
		AS u(tenant, id, mn, mv, st, tx, tr, ns, doc, usr, data, uk, ei, ek)),
	e AS (INSERT INTO entities (tenant, id, model_name, model_version, state, version, tx_id, transition, created_ns, updated_ns, doc)
		SELECT tenant, id, mn, mv, st, 1, tx, tr, ns, ns, doc::jsonb FROM u),
	r AS (INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data,
		user_kind, exec_id, exec_kind)
		SELECT tenant, id, 1, mn, mv, st, 'CREATED', tx, tr, usr, ns, ns, data, uk, ei, ek FROM u)
	INSERT INTO audit_events (tenant, entity_id, tx_id, seq, at_ns, kind, event_type, state, user_id, details, data)
	SELECT a.tenant, a.entity_id, a.tx_id, a.seq, a.at_ns, a.kind, a.event_type, a.state, a.usr, a.details, NULLIF(a.data, '')
	FROM unnest($15::text[], $16::text::uuid[], $17::text::uuid[], $18::int[], $19::bigint[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[])
	AS a(tenant, entity_id, tx_id, seq, at_ns, kind, event_type, state, usr, details, data)`

// manyArgs are insertMany's arguments for batch; ok is false when an entry
// cannot go this way (it arms tasks or records a change event: those go
// one statement each, in one transaction).
func manyArgs(batch []*groupEntry) (args []any, ok bool) {
	n := len(batch)
	var (
		tenant, mn, st, tr, doc, usr = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		mv                           = make([]int32, n)
		ns                           = make([]int64, n)
		data                         = make([][]byte, n)
		uk, ei, ek                   = make([]*string, n), make([]*string, n), make([]*string, n)
		ids, txs                     = make([]byte, 0, n*37+2), make([]byte, 0, n*37+2)
		aTenant, aKind, aType, aSt   []string
		aUsr, aDet, aData            []string
		aSeq                         []int32
		aAt                          []int64
		aIDs, aTxs                   = []byte{'{'}, []byte{'{'}
	)
	ids, txs = append(ids, '{'), append(txs, '{')
	for i, e := range batch {
		tx := e.tx
		if tx == nil || len(tx.Tasks) > 0 || len(tx.Changes) > 0 {
			return nil, false
		}
		w := &tx.Writes[0]
		if i > 0 {
			ids, txs = append(ids, ','), append(txs, ',')
		}
		ids, txs = appendUUIDText(ids, w.ID), appendUUIDText(txs, tx.ID)
		tenant[i], mn[i], mv[i], st[i], tr[i], ns[i] = tx.Tenant, w.Model.Name, int32(w.Model.Version), w.State, w.Transition, e.now
		doc[i], usr[i], data[i] = unsafe.String(unsafe.SliceData(w.Data), len(w.Data)), tx.User, w.Data
		uk[i], ei[i], ek[i] = attribution(tx, w)
		for j := range tx.Audit {
			a := &tx.Audit[j]
			if len(aSeq) > 0 {
				aIDs, aTxs = append(aIDs, ','), append(aTxs, ',')
			}
			aIDs = appendUUIDText(aIDs, a.EntityID)
			if a.TxID != ([16]byte{}) {
				aTxs = appendUUIDText(aTxs, a.TxID)
			} else {
				aTxs = appendUUIDText(aTxs, tx.ID)
			}
			at := e.now
			if !a.Time.IsZero() {
				at = a.Time.UnixNano()
			}
			aTenant, aSeq, aAt = append(aTenant, tx.Tenant), append(aSeq, int32(tx.AuditSeq+j)), append(aAt, at)
			aKind, aType, aSt = append(aKind, a.Kind), append(aType, a.Type), append(aSt, a.State)
			aUsr, aDet, aData = append(aUsr, tx.User), append(aDet, a.Details), append(aData, unsafeString(a.Data))
		}
	}
	ids, txs = append(ids, '}'), append(txs, '}')
	aIDs, aTxs = append(aIDs, '}'), append(aTxs, '}')
	if aSeq == nil {
		aTenant, aSeq, aAt, aKind, aType, aSt, aUsr, aDet, aData = []string{}, []int32{}, []int64{}, []string{}, []string{}, []string{}, []string{}, []string{}, []string{}
	}
	return []any{tenant, string(ids), mn, mv, st, string(txs), tr, ns, doc, usr, data, uk, ei, ek,
		aTenant, string(aIDs), string(aTxs), aSeq, aAt, aKind, aType, aSt, aUsr, aDet, aData}, true
}

// tryMany writes batch with insertMany, one statement and so atomic on
// its own. handled is false when the batch cannot go this way or the
// statement failed in PostgreSQL (nothing written): the caller then writes
// it statement by statement, which tells which create failed. Any other
// failure (the connection) is the batch's outcome, err.
func (g *groupCommit) tryMany(ctx context.Context, batch []*groupEntry) (handled bool, err error) {
	args, ok := manyArgs(batch)
	if !ok {
		return false, nil
	}
	c, err := g.db.acquire(ctx)
	if err != nil {
		return true, err
	}
	defer c.Release()
	if _, err := c.Exec(ctx, insertMany, args...); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return false, nil
		}
		return true, fmt.Errorf("postgres: inserting entities: %w", err)
	}
	g.many.Add(1)
	return true, nil
}
