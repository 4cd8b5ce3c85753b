package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// auditUnnest selects the rows of an audit insert from one array per
// column: one statement writes a transaction's events whatever their
// number. The arrays travel as text literals (see auditArgs).
// An event's own transaction id (a segmented run's state-machine events
// name the entry transaction) travels in tx_id; NULL there means the
// writing transaction's.
const auditUnnest = `SELECT %[1]s, a.entity_id, COALESCE(a.tx_id, %[2]s), a.seq, a.at_ns, a.kind, a.event_type, a.state, %[3]s, a.details, NULLIF(a.data, '')
	FROM unnest(%[4]s::text::uuid[], %[5]s::text::int[], %[6]s::text::bigint[], %[7]s::text::text[], %[8]s::text::text[], %[9]s::text::text[], %[10]s::text::text[], %[11]s::text::text[], %[12]s::text::uuid[])
	AS a(entity_id, seq, at_ns, kind, event_type, state, details, data, tx_id)`

const auditInsertInto = `INSERT INTO audit_events (tenant, entity_id, tx_id, seq, at_ns, kind, event_type, state, user_id, details, data) `

// insertAudit writes tx's events inside the commit transaction ptx.
var insertAudit = auditInsertInto + fmt.Sprintf(auditUnnest, "$1::text", "$2::uuid", "$3::text", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12")

// insertOneAudited is insertOne plus the transaction's events, still one
// statement, so a single create keeps its one round trip and its
// atomicity without BEGIN/COMMIT.
var insertOneAudited = `WITH e AS (INSERT INTO entities (tenant, id, model_name, model_version, state, version, tx_id, transition, created_ns, updated_ns, doc)
	VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $8, $9)),
	r AS (INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data,
		user_kind, exec_id, exec_kind)
	VALUES ($1, $2, 1, $3, $4, $5, 'CREATED', $6, $7, $10, $8, $8, $11, $12, $13, $14))
	` + auditInsertInto + fmt.Sprintf(auditUnnest, "$1", "$6", "$10", "$15", "$16", "$17", "$18", "$19", "$20", "$21", "$22", "$23")

// auditArgs are the nine column arrays of tx's events, stamped with the
// commit instant now where an event has no time of its own. Each array is
// one text literal built in a single buffer: pgx's binary array encoding
// boxes every element (about eight allocations per event), this is one
// string per column.
func auditArgs(tx *storage.Tx, now int64) []any {
	n := len(tx.Audit)
	buf := make([]byte, 0, n*160)
	out := make([]any, 0, 8)
	col := func(elem func(b []byte, e *storage.AuditEvent, i int) []byte) {
		start := len(buf)
		buf = append(buf, '{')
		for i := range tx.Audit {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = elem(buf, &tx.Audit[i], i)
		}
		buf = append(buf, '}')
		out = append(out, string(buf[start:]))
	}
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendUUIDText(b, e.EntityID) })
	col(func(b []byte, _ *storage.AuditEvent, i int) []byte {
		return strconv.AppendInt(b, int64(tx.AuditSeq+i), 10)
	})
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte {
		if e.Time.IsZero() {
			return strconv.AppendInt(b, now, 10)
		}
		return strconv.AppendInt(b, e.Time.UnixNano(), 10)
	})
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendArrayText(b, e.Kind) })
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendArrayText(b, e.Type) })
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendArrayText(b, e.State) })
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendArrayText(b, e.Details) })
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte { return appendArrayText(b, unsafeString(e.Data)) })
	col(func(b []byte, e *storage.AuditEvent, _ int) []byte {
		if e.TxID == ([16]byte{}) || e.TxID == tx.ID {
			return append(b, "NULL"...)
		}
		return appendUUIDText(b, e.TxID)
	})
	return out
}

// appendArrayText appends s as a quoted element of a PostgreSQL array
// literal.
func appendArrayText(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

func appendUUIDText(b []byte, id [16]byte) []byte {
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&15])
	}
	return b
}

// writeAudit inserts tx's events in the commit transaction ptx.
func writeAudit(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, now int64) error {
	if len(tx.Audit) == 0 {
		return nil
	}
	if len(tx.Audit) >= copyThreshold {
		return copyAudit(ctx, ptx, tx, now)
	}
	args := append([]any{tx.Tenant, tx.ID, tx.User}, auditArgs(tx, now)...)
	if _, err := ptx.Exec(ctx, insertAudit, args...); err != nil {
		return fmt.Errorf("postgres: inserting audit events: %w", err)
	}
	return nil
}

var auditCols = []string{"tenant", "entity_id", "tx_id", "seq", "at_ns", "kind", "event_type", "state", "user_id", "details", "data"}

// copyAudit writes a large transaction's events with COPY: the unnest
// insert made PostgreSQL parse nine array literals and run a table
// function, a tenth of its statement time in collection ingest (three
// events per entity); COPY's binary rows cost it neither (issue 14).
func copyAudit(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, now int64) error {
	i := 0
	row := make([]any, len(auditCols))
	// Values shared by every row are boxed once: each row's []any would
	// otherwise allocate them again (three events per entity).
	tenant, user, ownTx := any(tx.Tenant), any(tx.User), any(tx.ID)
	_, err := ptx.CopyFrom(ctx, pgx.Identifier{"audit_events"}, auditCols, pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(tx.Audit) {
			return nil, nil
		}
		e := &tx.Audit[i]
		txID := ownTx
		if e.TxID != ([16]byte{}) && e.TxID != tx.ID {
			txID = e.TxID
		}
		at := now
		if !e.Time.IsZero() {
			at = e.Time.UnixNano()
		}
		var data any
		if len(e.Data) > 0 {
			data = unsafeString(e.Data)
		}
		row[0], row[1], row[2], row[3], row[4] = tenant, e.EntityID, txID, int32(tx.AuditSeq+i), at
		row[5], row[6], row[7], row[8], row[9], row[10] = e.Kind, e.Type, e.State, user, e.Details, data
		i++
		return row, nil
	}))
	if err != nil {
		return fmt.Errorf("postgres: copying audit events: %w", err)
	}
	return nil
}

// deleteModelAudit ends DeleteModel's statement: one EntityChange DELETE
// per removed entity (from its revision r), so the count of rows it
// reports is still the count of entities.
const deleteModelAudit = auditInsertInto + `SELECT $1, r.id, $4, 0, r.at_ns, 'EntityChange', 'DELETE', r.state, $6, '', NULL FROM r`

// Audits reads the audit trail.
type Audits struct{ db *DB }

// Audits returns the audit trail store.
func (db *DB) Audits() *Audits { return &Audits{db} }

const auditSelect = `SELECT entity_id, tx_id, seq, at_ns, kind, event_type, state, user_id, details, data FROM audit_events `

func scanAudit(row pgx.Row) (storage.AuditEvent, error) {
	var e storage.AuditEvent
	var at int64
	var seq int32
	if err := row.Scan(&e.EntityID, &e.TxID, &seq, &at, &e.Kind, &e.Type, &e.State, &e.User, &e.Details, &e.Data); err != nil {
		return e, err
	}
	e.Seq, e.Time = int(seq), time.Unix(0, at).UTC()
	return e, nil
}

func (a *Audits) EntityAudit(ctx context.Context, tenant string, id [16]byte, f storage.AuditFilter, offset, limit int) ([]storage.AuditEvent, bool, error) {
	var from, to *int64
	if !f.From.IsZero() {
		v := f.From.UnixNano()
		from = &v
	}
	if !f.To.IsZero() {
		v := f.To.UnixNano()
		to = &v
	}
	c, err := a.db.acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, auditSelect+`WHERE tenant = $1 AND entity_id = $2
		AND ($3::text[] IS NULL OR kind = ANY($3)) AND ($4::bigint IS NULL OR at_ns >= $4)
		AND ($5::bigint IS NULL OR at_ns < $5) AND ($6::uuid IS NULL OR tx_id = $6)
		ORDER BY at_ns DESC, seq DESC OFFSET $7 LIMIT $8`,
		tenant, id, f.Kinds, from, to, f.TxID, int64(offset), int64(limit)+1)
	if err != nil {
		return nil, false, mapErr(fmt.Errorf("postgres: reading audit events: %w", err))
	}
	defer rows.Close()
	out := make([]storage.AuditEvent, 0, min(limit, 64))
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, false, fmt.Errorf("postgres: reading audit events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, mapErr(fmt.Errorf("postgres: reading audit events: %w", err))
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

func (a *Audits) FinishedEvent(ctx context.Context, tenant string, id, txID [16]byte) (*storage.AuditEvent, error) {
	c, err := a.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	e, err := scanAudit(c.QueryRow(ctx, auditSelect+`WHERE tenant = $1 AND entity_id = $2 AND tx_id = $3
		AND kind = 'StateMachine' AND event_type = 'STATE_MACHINE_FINISH' ORDER BY seq DESC LIMIT 1`, tenant, id, txID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, mapErr(fmt.Errorf("postgres: reading the finished event: %w", err))
	}
	return &e, nil
}

// unsafeString views b as a string for the length of one append.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
