package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/storage"
)

// The change feed on PostgreSQL (docs/decisions/0032-change-events.md):
// Commit writes its events into change_events in the entity change's own
// transaction; a cursor is (xid, seq) and readers only read rows of
// transactions older than every one still running in this database
// (horizon), so nothing can appear behind a cursor already read past.

// fillChanges sets FromState (and BodyBefore when asked) from the rows a
// commit locked, before it writes.
func fillChanges(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, cur map[[16]byte]*locked) error {
	for i := range tx.Changes {
		c := &tx.Changes[i]
		l := cur[c.EntityID]
		if c.Kind == storage.KindCreate || l == nil {
			continue
		}
		c.FromState = l.state
		if c.Kind == storage.KindDelete {
			c.ToState = c.FromState // a hard delete ends in the state it had
		}
		if c.WantBefore {
			if err := ptx.QueryRow(ctx, `SELECT data FROM entity_revisions WHERE id = $2 AND tenant = $1 AND version = $3`,
				tx.Tenant, c.EntityID, l.version).Scan(&c.BodyBefore); err != nil {
				return fmt.Errorf("postgres: reading the body before a change: %w", err)
			}
		}
	}
	return nil
}

func writeChanges(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, now int64) error {
	if len(tx.Changes) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for i := range tx.Changes {
		c := &tx.Changes[i]
		b.Queue(`INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition,
			emitted_ns, body_before, body_after) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			tx.Tenant, c.Model.Name, c.Model.Version, c.EntityID, tx.ID, c.Kind, c.FromState, c.ToState, c.Transition, now, c.BodyBefore, c.BodyAfter)
	}
	if err := ptx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("postgres: writing change events: %w", err)
	}
	return nil
}

// Changes returns the change log.
func (db *DB) Changes() *Changes { return &Changes{db} }

// Changes is the PostgreSQL storage.ChangeLog.
type Changes struct{ db *DB }

var _ storage.ChangeLog = (*Changes)(nil)

const (
	changeCols = `xid::text::bigint, seq, tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition,
		emitted_ns, body_before, body_after`
	// settled keeps a read behind every transaction still running ($H,
	// from horizon).
	settled = `xid < $H::bigint::text::xid8`
	after   = `(xid, seq) > ($1::bigint::text::xid8, $2)`
)

// horizon is an xid no transaction of this database still running is
// older than, read before the rows: first the snapshot's xmax (one past
// the latest completed xid), then the xids of this database's running
// transactions. Every xid below xmax that is not complete is among them,
// and a transaction that takes its xid later gets one at or above xmax,
// so reading only below the smallest of these never reads past a
// transaction that can still commit. Not pg_snapshot_xmin: that counts
// every database of the server, and a long transaction anywhere would
// hold the feed back. pg_stat_activity shows backend_xid for sessions of
// svc's own role, which writes every event.
func horizon(ctx context.Context, c *pgxpool.Conn) (int64, error) {
	var xmax int64
	if err := c.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&xmax); err != nil {
		return 0, fmt.Errorf("postgres: reading the snapshot's xmax: %w", err)
	}
	rows, err := c.Query(ctx, `SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL`)
	if err != nil {
		return 0, fmt.Errorf("postgres: reading running transactions: %w", err)
	}
	defer rows.Close()
	h := xmax
	for rows.Next() {
		var x32 int64
		if err := rows.Scan(&x32); err != nil {
			return 0, fmt.Errorf("postgres: reading running transactions: %w", err)
		}
		h = min(h, widenXid(xmax, x32))
	}
	// Never below zero: a negative bound cast to xid8 through text would
	// wrap to the top of the range and let the read pass every running
	// transaction.
	return max(h, 0), rows.Err()
}

// widenXid gives the 32-bit xid x32 (backend_xid) the epoch that puts it
// nearest to ref, a full xid: running transactions are within 2^31 of
// each other (PostgreSQL stops assigning xids long before that distance
// wraps). A running xid may be above ref (assigned after the latest
// completed one), so the distance is signed, not a choice between ref's
// epoch and the one before.
func widenXid(ref, x32 int64) int64 {
	return ref + int64(int32(uint32(x32)-uint32(ref)))
}

// settledSQL puts the horizon's parameter number into a query.
func settledSQL(q string, n int) string {
	return strings.ReplaceAll(q, "$H", "$"+strconv.Itoa(n))
}

func (s *Changes) ReadChanges(ctx context.Context, q storage.ChangeQuery) ([]storage.ChangeEvent, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	h, err := horizon(ctx, c)
	if err != nil {
		return nil, err
	}
	var rows pgx.Rows
	switch {
	case q.Model != nil:
		rows, err = c.Query(ctx, settledSQL(`SELECT `+changeCols+` FROM change_events WHERE tenant = $3 AND model_name = $4 AND model_version = $5 AND `+
			after+` AND `+settled+` ORDER BY xid, seq LIMIT $6`, 7), q.After.Hi, q.After.Lo, q.Tenant, q.Model.Name, q.Model.Version, q.Limit, h)
	case q.Tenant != "":
		rows, err = c.Query(ctx, settledSQL(`SELECT `+changeCols+` FROM change_events WHERE tenant = $3 AND `+after+` AND `+settled+
			` ORDER BY xid, seq LIMIT $4`, 5), q.After.Hi, q.After.Lo, q.Tenant, q.Limit, h)
	default:
		rows, err = c.Query(ctx, settledSQL(`SELECT `+changeCols+` FROM change_events WHERE `+after+` AND `+settled+
			` ORDER BY xid, seq LIMIT $3`, 4), q.After.Hi, q.After.Lo, q.Limit, h)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading change events: %w", err)
	}
	defer rows.Close()
	var out []storage.ChangeEvent
	for rows.Next() {
		var e storage.ChangeEvent
		var at int64
		if err := rows.Scan(&e.Cursor.Hi, &e.Cursor.Lo, &e.Tenant, &e.Model.Name, &e.Model.Version, &e.EntityID, &e.TxID, &e.Kind,
			&e.FromState, &e.ToState, &e.Transition, &at, &e.BodyBefore, &e.BodyAfter); err != nil {
			return nil, fmt.Errorf("postgres: reading change events: %w", err)
		}
		e.EmittedAt = unixNano(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: reading change events: %w", err)
	}
	return out, nil
}

// ChangeHead is the newest settled event's cursor; with none, a cursor
// just below every transaction still to commit.
func (s *Changes) ChangeHead(ctx context.Context) (storage.ChangeCursor, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return storage.ChangeCursor{}, err
	}
	defer c.Release()
	x, err := horizon(ctx, c)
	if err != nil {
		return storage.ChangeCursor{}, err
	}
	var h storage.ChangeCursor
	err = c.QueryRow(ctx, settledSQL(`SELECT xid::text::bigint, seq FROM change_events WHERE `+settled+` ORDER BY xid DESC, seq DESC LIMIT 1`, 1), x).Scan(&h.Hi, &h.Lo)
	if errors.Is(err, pgx.ErrNoRows) {
		// None yet: below every transaction still to write one.
		return storage.ChangeCursor{Hi: x - 1, Lo: 1<<63 - 1}, nil
	}
	if err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("postgres: reading the change head: %w", err)
	}
	return h, nil
}

func (s *Changes) ChangeCursorAt(ctx context.Context, tenant string, model storage.ModelKey, t time.Time) (storage.ChangeCursor, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return storage.ChangeCursor{}, err
	}
	defer c.Release()
	var h storage.ChangeCursor
	err = c.QueryRow(ctx, `SELECT xid::text::bigint, seq FROM change_events WHERE tenant = $1 AND model_name = $2 AND model_version = $3
		AND emitted_ns >= $4 ORDER BY xid, seq LIMIT 1`, tenant, model.Name, model.Version, t.UnixNano()).Scan(&h.Hi, &h.Lo)
	if errors.Is(err, pgx.ErrNoRows) {
		c.Release()
		return s.ChangeHead(ctx)
	}
	if err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("postgres: finding a change cursor: %w", err)
	}
	h.Lo-- // just before it: (xid, seq-1) is below it and above everything before
	return h, nil
}

func (s *Changes) ChangeLag(ctx context.Context, tenant string, model storage.ModelKey, a storage.ChangeCursor) (int64, time.Time, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer c.Release()
	var n int64
	var oldest *int64
	err = c.QueryRow(ctx, `SELECT COUNT(*), MIN(emitted_ns) FROM change_events WHERE tenant = $3 AND model_name = $4 AND model_version = $5 AND `+after,
		a.Hi, a.Lo, tenant, model.Name, model.Version).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("postgres: measuring lag: %w", err)
	}
	var at time.Time
	if oldest != nil {
		at = unixNano(*oldest)
	}
	return n, at, nil
}

func (s *Changes) PruneChanges(ctx context.Context, before time.Time, keep int64) (int64, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM change_events WHERE emitted_ns < $1`, before.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("postgres: pruning change events: %w", err)
	}
	n := tag.RowsAffected()
	if keep <= 0 {
		return n, nil
	}
	// Each tenant and model keeps its newest keep events: the keys above
	// the ceiling first (an index-only count), then, per key, everything
	// at or below its (keep+1)-th newest event.
	rows, err := c.Query(ctx, `SELECT tenant, model_name, model_version FROM change_events GROUP BY tenant, model_name, model_version HAVING COUNT(*) > $1`, keep)
	if err != nil {
		return n, fmt.Errorf("postgres: pruning change events: %w", err)
	}
	var keys []storage.ChangeEvent
	for rows.Next() {
		var e storage.ChangeEvent
		if err := rows.Scan(&e.Tenant, &e.Model.Name, &e.Model.Version); err != nil {
			rows.Close()
			return n, fmt.Errorf("postgres: pruning change events: %w", err)
		}
		keys = append(keys, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("postgres: pruning change events: %w", err)
	}
	for _, k := range keys {
		tag, err := c.Exec(ctx, `DELETE FROM change_events WHERE tenant = $1 AND model_name = $2 AND model_version = $3 AND (xid, seq) <= (
			SELECT xid, seq FROM change_events WHERE tenant = $1 AND model_name = $2 AND model_version = $3 ORDER BY xid DESC, seq DESC OFFSET $4 LIMIT 1)`,
			k.Tenant, k.Model.Name, k.Model.Version, keep)
		if err != nil {
			return n, fmt.Errorf("postgres: pruning change events: %w", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// Subscriptions returns the subscription store.
func (db *DB) Subscriptions() *Subscriptions { return &Subscriptions{db} }

// Subscriptions is the PostgreSQL storage.Subscriptions.
type Subscriptions struct{ db *DB }

var _ storage.Subscriptions = (*Subscriptions)(nil)

const subCols = `tenant, id, model_name, model_version, include_body, spec, cursor_hi, cursor_lo, created_ns, attached_ns`

func scanSub(r pgx.Row) (*storage.Subscription, error) {
	var s storage.Subscription
	var created, attached int64
	if err := r.Scan(&s.Tenant, &s.ID, &s.Model.Name, &s.Model.Version, &s.IncludeBody, &s.Spec, &s.Cursor.Hi, &s.Cursor.Lo, &created, &attached); err != nil {
		return nil, notFoundOr(err, "read subscription")
	}
	s.CreatedAt, s.AttachedAt = unixNano(created), unixNano(attached)
	return &s, nil
}

func (s *Subscriptions) exec(ctx context.Context, what string, sql string, args ...any) (int64, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres: %s: %w", what, mapErr(err))
	}
	return tag.RowsAffected(), nil
}

func (s *Subscriptions) CreateSubscription(ctx context.Context, sub *storage.Subscription) error {
	n, err := s.exec(ctx, "create subscription", `INSERT INTO subscriptions (`+subCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT DO NOTHING`, sub.Tenant, sub.ID, sub.Model.Name, sub.Model.Version, sub.IncludeBody, sub.Spec, sub.Cursor.Hi, sub.Cursor.Lo,
		nsOf(sub.CreatedAt), nsOf(sub.AttachedAt))
	if err == nil && n == 0 {
		return storage.ErrExists
	}
	return err
}

func (s *Subscriptions) GetSubscription(ctx context.Context, tenant, id string) (*storage.Subscription, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return scanSub(c.QueryRow(ctx, `SELECT `+subCols+` FROM subscriptions WHERE tenant = $1 AND id = $2`, tenant, id))
}

func (s *Subscriptions) list(ctx context.Context, sql string, args ...any) ([]storage.Subscription, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list subscriptions: %w", err)
	}
	defer rows.Close()
	var out []storage.Subscription
	for rows.Next() {
		sub, err := scanSub(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *sub)
	}
	return out, rows.Err()
}

func (s *Subscriptions) ListSubscriptions(ctx context.Context, tenant, afterID string, limit int) ([]storage.Subscription, error) {
	return s.list(ctx, `SELECT `+subCols+` FROM subscriptions WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3`, tenant, afterID, limit)
}

func (s *Subscriptions) AllSubscriptions(ctx context.Context) ([]storage.Subscription, error) {
	return s.list(ctx, `SELECT `+subCols+` FROM subscriptions`)
}

func notFoundIfNone(n int64, err error) error {
	if err == nil && n == 0 {
		return storage.ErrNotFound
	}
	return err
}

func (s *Subscriptions) UpdateSubscription(ctx context.Context, sub *storage.Subscription) error {
	return notFoundIfNone(s.exec(ctx, "update subscription", `UPDATE subscriptions SET include_body = $3, spec = $4 WHERE tenant = $1 AND id = $2`,
		sub.Tenant, sub.ID, sub.IncludeBody, sub.Spec))
}

func (s *Subscriptions) DeleteSubscription(ctx context.Context, tenant, id string) error {
	return notFoundIfNone(s.exec(ctx, "delete subscription", `DELETE FROM subscriptions WHERE tenant = $1 AND id = $2`, tenant, id))
}

func (s *Subscriptions) AckSubscription(ctx context.Context, tenant, id string, cur storage.ChangeCursor, at time.Time) error {
	return notFoundIfNone(s.exec(ctx, "acknowledge subscription", `UPDATE subscriptions SET
		(cursor_hi, cursor_lo) = (SELECT CASE WHEN (cursor_hi, cursor_lo) < ($3, $4) THEN $3 ELSE cursor_hi END,
			CASE WHEN (cursor_hi, cursor_lo) < ($3, $4) THEN $4 ELSE cursor_lo END),
		attached_ns = $5 WHERE tenant = $1 AND id = $2`, tenant, id, cur.Hi, cur.Lo, at.UnixNano()))
}
