package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"svc/storage"
)

// The change feed on SQLite (docs/decisions/0032-change-events.md): a
// change event rides the revision its commit writes for the entity
// (migrations/sqlite/0006_change_events_on_revisions.sql): a few columns
// set only for a watched write, and the partial index revisions_feed over
// those rows alone, so an event costs its commit one index page and no
// statement. revisions is append-only and its rowid is max + 1 under the
// one writer, so rowids are commit order: a cursor is {1, rowid} (Hi 1
// orders every cursor after those of the outbox before migration 0006,
// {0, seq}), and the largest rowid is the head.

// ev bits (the migration describes them).
const (
	evCreate  = 1
	evUpdate  = 2
	evDelete  = 3
	evKind    = 3
	evAfter   = 1 << 2
	evBefore  = 1 << 3
	evBack1   = 1 << 4 // the body before is one version back
	evBackBit = 4
)

var evKinds = [...]string{evCreate: storage.KindCreate, evUpdate: storage.KindUpdate, evDelete: storage.KindDelete}

// carried is the change event a commit's write carries on its revision:
// the last write of each entity with a change.
type carried struct {
	c *storage.Change
	// from is the entity's version before the commit (0: created by it).
	from int64
}

// carryChanges says which of tx's writes carries which change, and fills
// each change's FromState (and a delete's ToState) from the rows the
// commit read before writing.
func carryChanges(tx *storage.Tx, curs map[[16]byte]*cur) ([]carried, error) {
	carry := make([]carried, len(tx.Writes))
	var last map[[16]byte]int
	if len(tx.Writes) > 1 {
		last = make(map[[16]byte]int, len(tx.Writes))
		for i := range tx.Writes {
			last[tx.Writes[i].ID] = i
		}
	}
	for i := range tx.Changes {
		c := &tx.Changes[i]
		j, ok := 0, tx.Writes[0].ID == c.EntityID
		if last != nil {
			j, ok = last[c.EntityID]
		}
		if !ok {
			return nil, fmt.Errorf("sqlite: a change event for entity %x, which the commit does not write", c.EntityID)
		}
		k := carried{c: c}
		if cr := curs[c.EntityID]; cr != nil && c.Kind != storage.KindCreate {
			c.FromState = cr.state
			if c.Kind == storage.KindDelete {
				c.ToState = c.FromState // a hard delete ends in the state it had
			}
			k.from = cr.version
		}
		carry[j] = k
	}
	return carry, nil
}

// event is the ev, ev_from, ev_to and ev_tr of the revision of version,
// state and transition that carries k's change.
func (k *carried) event(version int64, state, transition string) [4]any {
	c := k.c
	var code int64
	var from any
	switch c.Kind {
	case storage.KindCreate:
		code = evCreate
	case storage.KindDelete:
		code, from = evDelete, c.FromState
	default:
		code, from = evUpdate, c.FromState
	}
	if c.BodyAfter != nil {
		code |= evAfter
	}
	if c.WantBefore && c.Kind != storage.KindCreate {
		code |= evBefore | (version-k.from)<<evBackBit
	}
	var to, tr any
	if c.ToState != state {
		to = c.ToState
	}
	if c.Transition != transition {
		tr = c.Transition
	}
	return [4]any{code, from, to, tr}
}

// Changes returns the change log.
func (db *DB) Changes() *Changes { return &Changes{db} }

// Changes is the SQLite storage.ChangeLog.
type Changes struct{ db *DB }

// changeCols reads an event from its revision r: the body before from the
// revision ev >> 4 versions back, the body after from r's data.
const changeCols = `r.rowid, r.tenant, r.model_name, r.model_version, r.id, r.tx_id, r.ev, COALESCE(r.ev_from, ''), COALESCE(r.ev_to, r.state),
	COALESCE(r.ev_tr, r.transition), r.at_ns,
	CASE WHEN r.ev & 8 THEN (SELECT b.data FROM revisions b WHERE b.id = r.id AND b.tenant = r.tenant AND b.version = r.version - (r.ev >> 4)) END,
	CASE WHEN r.ev & 4 THEN r.data END`

// feedKey is a model's events in cursor order, through the partial index.
const feedKey = ` FROM revisions r INDEXED BY revisions_feed WHERE r.tenant = ? AND r.model_name = ? AND r.model_version = ? AND r.ev IS NOT NULL`

// afterRowid is the rowid a read after c starts past.
func afterRowid(c storage.ChangeCursor) int64 {
	switch {
	case c.Hi < 1:
		return 0 // an outbox cursor from before migration 0006: every event is after it
	case c.Hi > 1:
		return math.MaxInt64
	}
	return c.Lo
}

// feedKeys lists the (tenant, model) keys that have events, one index seek
// each (a skip scan of revisions_feed), optionally of one tenant.
func feedKeys(queryRow func(string, ...any) scanner, tenant string) ([]storage.ChangeEvent, error) {
	var keys []storage.ChangeEvent
	k := storage.ChangeEvent{Tenant: tenant}
	k.Model.Version = math.MinInt64
	for {
		var next storage.ChangeEvent
		err := queryRow(`SELECT tenant, model_name, model_version FROM revisions INDEXED BY revisions_feed
			WHERE ev IS NOT NULL AND (tenant, model_name, model_version) > (?, ?, ?) ORDER BY tenant, model_name, model_version LIMIT 1`,
			k.Tenant, k.Model.Name, k.Model.Version).Scan(&next.Tenant, &next.Model.Name, &next.Model.Version)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && tenant != "" && next.Tenant != tenant) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: listing change event keys: %w", err)
		}
		keys = append(keys, next)
		k = next
	}
}

func (s *Changes) queryRow(ctx context.Context) func(string, ...any) scanner {
	return func(q string, args ...any) scanner { return s.db.queryRow(ctx, q, args...) }
}

func (s *Changes) ReadChanges(ctx context.Context, q storage.ChangeQuery) ([]storage.ChangeEvent, error) {
	after := afterRowid(q.After)
	if q.Model != nil {
		return s.read(ctx, `SELECT `+changeCols+feedKey+` AND r.rowid > ? ORDER BY r.rowid LIMIT ?`,
			q.Tenant, q.Model.Name, q.Model.Version, after, q.Limit)
	}
	// Every model (of a tenant): the first Limit rowids of each key, merged.
	keys, err := feedKeys(s.queryRow(ctx), q.Tenant)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, k := range keys {
		rows, err := s.db.query(ctx, `SELECT r.rowid`+feedKey+` AND r.rowid > ? ORDER BY r.rowid LIMIT ?`,
			k.Tenant, k.Model.Name, k.Model.Version, after, q.Limit)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: reading change events: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: reading change events: %w", err)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	if len(ids) > q.Limit {
		ids = ids[:q.Limit]
	}
	return s.read(ctx, `SELECT `+changeCols+` FROM revisions r WHERE r.rowid BETWEEN ? AND ? AND r.ev IS NOT NULL AND r.rowid IN (SELECT value FROM json_each(?))
		ORDER BY r.rowid`, ids[0], ids[len(ids)-1], int64sJSON(ids))
}

func int64sJSON(ids []int64) string {
	b := make([]byte, 0, len(ids)*8+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

func (s *Changes) read(ctx context.Context, query string, args ...any) ([]storage.ChangeEvent, error) {
	rows, err := s.db.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.ChangeEvent
	for rows.Next() {
		var e storage.ChangeEvent
		var id, txID []byte
		var at, ev int64
		if err := rows.Scan(&e.Cursor.Lo, &e.Tenant, &e.Model.Name, &e.Model.Version, &id, &txID, &ev, &e.FromState, &e.ToState,
			&e.Transition, &at, &e.BodyBefore, &e.BodyAfter); err != nil {
			return nil, fmt.Errorf("sqlite: reading change events: %w", err)
		}
		e.Cursor.Hi = 1
		e.Kind = evKinds[ev&evKind]
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
	// revisions is append-only: its largest rowid only grows, and every
	// event written later has a larger one.
	if err := s.db.queryRow(ctx, `SELECT MAX(rowid) FROM revisions`).Scan(&n); err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("sqlite: reading the change head: %w", err)
	}
	return storage.ChangeCursor{Hi: 1, Lo: n.Int64}, nil
}

func (s *Changes) ChangeCursorAt(ctx context.Context, tenant string, model storage.ModelKey, t time.Time) (storage.ChangeCursor, error) {
	var n int64
	err := s.db.queryRow(ctx, `SELECT r.rowid`+feedKey+` AND r.at_ns >= ? ORDER BY r.rowid LIMIT 1`,
		tenant, model.Name, model.Version, t.UnixNano()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return s.ChangeHead(ctx)
	}
	if err != nil {
		return storage.ChangeCursor{}, fmt.Errorf("sqlite: finding a change cursor: %w", err)
	}
	return storage.ChangeCursor{Hi: 1, Lo: n - 1}, nil
}

func (s *Changes) ChangeLag(ctx context.Context, tenant string, model storage.ModelKey, after storage.ChangeCursor) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullInt64
	a := afterRowid(after)
	const key = ` FROM revisions r INDEXED BY revisions_feed WHERE r.tenant = ?1 AND r.model_name = ?2 AND r.model_version = ?3
		AND r.ev IS NOT NULL AND r.rowid > ?4`
	err := s.db.queryRow(ctx, `SELECT COUNT(*), (SELECT r.at_ns`+key+` ORDER BY r.rowid LIMIT 1)`+key,
		tenant, model.Name, model.Version, a).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite: measuring lag: %w", err)
	}
	return n, fromNS(oldest.Int64), nil
}

// PruneChanges clears the events (ev and its columns; the revisions stay)
// older than before, and each tenant and model's beyond its newest keep,
// key by key through the partial index: in a key's cursor order at_ns
// does not decrease (the writer's clock).
func (s *Changes) PruneChanges(ctx context.Context, before time.Time, keep int64) (int64, error) {
	var n int64
	err := s.db.w.write(ctx, func(w *wtx) error {
		n = 0
		keys, err := feedKeys(func(q string, args ...any) scanner { return w.queryRow(q, args...) }, "")
		if err != nil {
			return err
		}
		for _, k := range keys {
			key := []any{k.Tenant, k.Model.Name, k.Model.Version}
			// Everything below cut goes: the first event kept by age, or
			// past the (keep+1)-th newest.
			cut := int64(math.MaxInt64)
			var r int64
			err := w.queryRow(`SELECT r.rowid`+feedKey+` AND r.at_ns >= ? ORDER BY r.rowid LIMIT 1`, append(key, before.UnixNano())...).Scan(&r)
			switch {
			case err == nil:
				cut = r
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("sqlite: pruning change events: %w", err)
			}
			if keep > 0 {
				err := w.queryRow(`SELECT r.rowid`+feedKey+` ORDER BY r.rowid DESC LIMIT 1 OFFSET ?`, append(key, keep)...).Scan(&r)
				switch {
				case err == nil:
					cut = max(cut, r+1)
				case !errors.Is(err, sql.ErrNoRows):
					return fmt.Errorf("sqlite: pruning change events: %w", err)
				}
			}
			res, err := w.exec(`UPDATE revisions SET ev = NULL, ev_from = NULL, ev_to = NULL, ev_tr = NULL
				WHERE rowid IN (SELECT r.rowid`+feedKey+` AND r.rowid < ?)`, append(key, cut)...)
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
