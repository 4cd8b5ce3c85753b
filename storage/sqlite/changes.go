package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"svc/storage"
)

// The change feed on SQLite (docs/decisions/0032-change-events.md): Commit
// writes its events into change_events in the entity change's own
// transaction. The engine has one writer, so the row sequence is commit
// order and a cursor is {0, seq}.

// fillChanges sets FromState (and BodyBefore when asked) from the rows a
// commit read before writing.
func fillChanges(w *wtx, tx *storage.Tx, curs map[[16]byte]*cur) error {
	for i := range tx.Changes {
		c := &tx.Changes[i]
		cr := curs[c.EntityID]
		if c.Kind == storage.KindCreate || cr == nil {
			continue
		}
		c.FromState = cr.state
		if c.Kind == storage.KindDelete {
			c.ToState = c.FromState // a hard delete ends in the state it had
		}
		if c.WantBefore {
			var data []byte
			err := w.queryRow(`SELECT data FROM revisions WHERE id = ? AND tenant = ? AND version = ?`, c.EntityID[:], tx.Tenant, cr.version).Scan(&data)
			if err != nil {
				return fmt.Errorf("sqlite: reading the body before a change: %w", err)
			}
			c.BodyBefore = data
		}
	}
	return nil
}

const insertChange = `INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition,
	emitted_ns, body_before, body_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func writeChanges(w *wtx, tx *storage.Tx, at int64) error {
	for i := range tx.Changes {
		c := &tx.Changes[i]
		if _, err := w.exec(insertChange, tx.Tenant, c.Model.Name, c.Model.Version, c.EntityID[:], tx.ID[:], c.Kind, c.FromState, c.ToState,
			c.Transition, at, nullBlob(c.BodyBefore), nullBlob(c.BodyAfter)); err != nil {
			return fmt.Errorf("sqlite: writing a change event: %w", err)
		}
	}
	return nil
}

func nullBlob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// Changes returns the change log.
func (db *DB) Changes() *Changes { return &Changes{db} }

// Changes is the SQLite storage.ChangeLog.
type Changes struct{ db *DB }

const changeCols = `seq, tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition, emitted_ns, body_before, body_after`

func (s *Changes) ReadChanges(ctx context.Context, q storage.ChangeQuery) ([]storage.ChangeEvent, error) {
	var rows *sql.Rows
	var err error
	switch {
	case q.Model != nil:
		rows, err = s.db.query(ctx, `SELECT `+changeCols+` FROM change_events WHERE tenant = ? AND model_name = ? AND model_version = ? AND seq > ?
			ORDER BY seq LIMIT ?`, q.Tenant, q.Model.Name, q.Model.Version, q.After.Lo, q.Limit)
	case q.Tenant != "":
		rows, err = s.db.query(ctx, `SELECT `+changeCols+` FROM change_events WHERE tenant = ? AND seq > ? ORDER BY seq LIMIT ?`, q.Tenant, q.After.Lo, q.Limit)
	default:
		// tenant '' is the sequence's mark (PruneChanges), no event.
		rows, err = s.db.query(ctx, `SELECT `+changeCols+` FROM change_events WHERE seq > ? AND tenant <> '' ORDER BY seq LIMIT ?`, q.After.Lo, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.ChangeEvent
	for rows.Next() {
		var e storage.ChangeEvent
		var id, txID []byte
		var at int64
		if err := rows.Scan(&e.Cursor.Lo, &e.Tenant, &e.Model.Name, &e.Model.Version, &id, &txID, &e.Kind, &e.FromState, &e.ToState,
			&e.Transition, &at, &e.BodyBefore, &e.BodyAfter); err != nil {
			return nil, fmt.Errorf("sqlite: reading change events: %w", err)
		}
		e.EntityID, e.TxID, e.EmittedAt = id16(id), id16(txID), fromNS(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading change events: %w", err)
	}
	return out, nil
}

func (s *Changes) ChangeHead(ctx context.Context) (storage.ChangeCursor, error) {
	var n sql.NullInt64
	if err := s.db.queryRow(ctx, `SELECT MAX(seq) FROM change_events`).Scan(&n); err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("sqlite: reading the change head: %w", err)
	}
	// The table is never emptied once it has had a row (PruneChanges
	// leaves a mark row when it prunes the newest), so its largest seq is
	// the high-water mark.
	return storage.ChangeCursor{Lo: n.Int64}, nil
}

func (s *Changes) ChangeCursorAt(ctx context.Context, tenant string, model storage.ModelKey, t time.Time) (storage.ChangeCursor, error) {
	var n int64
	err := s.db.queryRow(ctx, `SELECT seq FROM change_events WHERE tenant = ? AND model_name = ? AND model_version = ? AND emitted_ns >= ?
		ORDER BY seq LIMIT 1`, tenant, model.Name, model.Version, t.UnixNano()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return s.ChangeHead(ctx)
	}
	if err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("sqlite: finding a change cursor: %w", err)
	}
	return storage.ChangeCursor{Lo: n - 1}, nil
}

func (s *Changes) ChangeLag(ctx context.Context, tenant string, model storage.ModelKey, after storage.ChangeCursor) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullInt64
	err := s.db.queryRow(ctx, `SELECT COUNT(*), MIN(emitted_ns) FROM change_events WHERE tenant = ? AND model_name = ? AND model_version = ? AND seq > ?`,
		tenant, model.Name, model.Version, after.Lo).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite: measuring lag: %w", err)
	}
	return n, fromNS(oldest.Int64), nil
}

func (s *Changes) PruneChanges(ctx context.Context, before time.Time, keep int64) (int64, error) {
	var n int64
	err := s.db.w.write(ctx, func(w *wtx) error {
		// By age, in seq order (in which emitted_ns does not decrease: the
		// writer's clock) up to the first event kept. seq is the rowid, max
		// + 1 on insert, so when the newest row goes a mark row takes its
		// seq (tenant '', which no reader returns): the high-water mark a
		// cursor must never see handed out again. The next prune drops the
		// mark once newer rows exist.
		var top sql.NullInt64
		if err := w.queryRow(`SELECT MAX(seq) FROM change_events`).Scan(&top); err != nil {
			return fmt.Errorf("sqlite: pruning change events: %w", err)
		}
		res, err := w.exec(`DELETE FROM change_events WHERE seq < COALESCE((SELECT seq FROM change_events WHERE emitted_ns >= ? ORDER BY seq LIMIT 1),
			9223372036854775807)`, before.UnixNano())
		if err != nil {
			return fmt.Errorf("sqlite: pruning change events: %w", err)
		}
		n, _ = res.RowsAffected()
		if top.Valid && n > 0 {
			res, err := w.exec(`INSERT INTO change_events (seq, tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state,
				transition, emitted_ns) SELECT ?1, '', '', 0, x'', x'', 'HEAD', '', '', '', 0 WHERE NOT EXISTS (SELECT 1 FROM change_events WHERE seq >= ?1)`, top.Int64)
			if err != nil {
				return fmt.Errorf("sqlite: keeping the change sequence's mark: %w", err)
			}
			if k, _ := res.RowsAffected(); k > 0 {
				n -= k // the mark is no event; it replaced the newest one pruned
			}
		}
		if keep <= 0 {
			return nil
		}
		// Each tenant and model keeps its newest keep events: the keys
		// above the ceiling first (an index-only count), then, per key,
		// everything at or below its (keep+1)-th newest event.
		rows, err := w.query(`SELECT tenant, model_name, model_version FROM change_events GROUP BY tenant, model_name, model_version HAVING COUNT(*) > ?`, keep)
		if err != nil {
			return fmt.Errorf("sqlite: pruning change events: %w", err)
		}
		var keys []storage.ChangeEvent
		for rows.Next() {
			var e storage.ChangeEvent
			if err := rows.Scan(&e.Tenant, &e.Model.Name, &e.Model.Version); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: pruning change events: %w", err)
			}
			keys = append(keys, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: pruning change events: %w", err)
		}
		for _, k := range keys {
			res, err := w.exec(`DELETE FROM change_events WHERE tenant = ? AND model_name = ? AND model_version = ? AND seq <= (
				SELECT seq FROM change_events WHERE tenant = ? AND model_name = ? AND model_version = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
				k.Tenant, k.Model.Name, k.Model.Version, k.Tenant, k.Model.Name, k.Model.Version, keep)
			if err != nil {
				return fmt.Errorf("sqlite: pruning change events: %w", err)
			}
			d, _ := res.RowsAffected()
			n += d
		}
		return nil
	})
	return n, err
}

// Subscriptions returns the subscription store.
func (db *DB) Subscriptions() *Subscriptions { return &Subscriptions{db} }

// Subscriptions is the SQLite storage.Subscriptions.
type Subscriptions struct{ db *DB }

const subCols = `tenant, id, model_name, model_version, include_body, spec, cursor_hi, cursor_lo, created_ns, attached_ns`

func scanSub(r scanner) (*storage.Subscription, error) {
	var s storage.Subscription
	var created, attached int64
	if err := r.Scan(&s.Tenant, &s.ID, &s.Model.Name, &s.Model.Version, &s.IncludeBody, &s.Spec, &s.Cursor.Hi, &s.Cursor.Lo, &created, &attached); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("sqlite: reading subscription: %w", err)
	}
	s.CreatedAt, s.AttachedAt = fromNS(created), fromNS(attached)
	return &s, nil
}

func (s *Subscriptions) CreateSubscription(ctx context.Context, sub *storage.Subscription) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`INSERT INTO subscriptions (`+subCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			sub.Tenant, sub.ID, sub.Model.Name, sub.Model.Version, sub.IncludeBody, docArg(sub.Spec), sub.Cursor.Hi, sub.Cursor.Lo,
			ns(sub.CreatedAt), ns(sub.AttachedAt))
		if err != nil {
			return fmt.Errorf("sqlite: writing subscription: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrExists
		}
		return nil
	})
}

func (s *Subscriptions) GetSubscription(ctx context.Context, tenant, id string) (*storage.Subscription, error) {
	return scanSub(s.db.queryRow(ctx, `SELECT `+subCols+` FROM subscriptions WHERE tenant = ? AND id = ?`, tenant, id))
}

func (s *Subscriptions) list(ctx context.Context, query string, args ...any) ([]storage.Subscription, error) {
	rows, err := s.db.query(ctx, query, args...)
	if err != nil {
		return nil, err
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
	return s.list(ctx, `SELECT `+subCols+` FROM subscriptions WHERE tenant = ? AND id > ? ORDER BY id LIMIT ?`, tenant, afterID, limit)
}

func (s *Subscriptions) AllSubscriptions(ctx context.Context) ([]storage.Subscription, error) {
	return s.list(ctx, `SELECT `+subCols+` FROM subscriptions`)
}

func (s *Subscriptions) change(ctx context.Context, query string, args ...any) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(query, args...)
		if err != nil {
			return fmt.Errorf("sqlite: writing subscription: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
}

func (s *Subscriptions) UpdateSubscription(ctx context.Context, sub *storage.Subscription) error {
	return s.change(ctx, `UPDATE subscriptions SET include_body = ?, spec = ? WHERE tenant = ? AND id = ?`, sub.IncludeBody, docArg(sub.Spec), sub.Tenant, sub.ID)
}

func (s *Subscriptions) DeleteSubscription(ctx context.Context, tenant, id string) error {
	return s.change(ctx, `DELETE FROM subscriptions WHERE tenant = ? AND id = ?`, tenant, id)
}

func (s *Subscriptions) AckSubscription(ctx context.Context, tenant, id string, c storage.ChangeCursor, at time.Time) error {
	return s.change(ctx, `UPDATE subscriptions SET
		cursor_hi = CASE WHEN cursor_hi < ?1 OR (cursor_hi = ?1 AND cursor_lo < ?2) THEN ?1 ELSE cursor_hi END,
		cursor_lo = CASE WHEN cursor_hi < ?1 OR (cursor_hi = ?1 AND cursor_lo < ?2) THEN ?2 ELSE cursor_lo END,
		attached_ns = ?3 WHERE tenant = ?4 AND id = ?5`, c.Hi, c.Lo, at.UnixNano(), tenant, id)
}
