package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"svc/storage"
)

// Entities is the SQLite storage.Entities. A transaction is one job of the
// single writer (writer.go): its updates' versions are checked, then every
// row it writes — entity rows, revisions, unique claims, audit events,
// scheduled tasks — goes into the shared write transaction inside the
// job's savepoint. The writer is the only one, so nothing changes between
// the check and the write.
type Entities struct{ db *DB }

// Entities returns the entity store of db.
func (db *DB) Entities() *Entities { return &Entities{db} }

const (
	chCreated = 0
	chUpdated = 1
	chDeleted = 2
)

var changeNames = [...]string{storage.ChangeCreated, storage.ChangeUpdated, storage.ChangeDeleted}

// cur is an entity's current row as a commit reads it.
type cur struct {
	version          int64
	deleted          bool
	updated, created int64
	model            storage.ModelKey
	state            string
}

const insertRevision = `INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
	created_ns, at_ns, user_kind, exec_id, exec_kind, trio, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertRevisionEv is insertRevision for the revision that carries a
// change event (changes.go).
const insertRevisionEv = `INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
	created_ns, at_ns, user_kind, exec_id, exec_kind, trio, data, ev, ev_from, ev_to, ev_tr)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Entities) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	var at int64
	// commit reads and writes only the database (its instant comes from
	// the writer's clock, which only moves forward), so a group of commits
	// may skip per-job savepoints and re-run after a rare failure.
	err := s.db.w.writePure(ctx, func(w *wtx) error {
		var err error
		at, err = commit(w, tx)
		return err
	})
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, at).UTC(), nil
}

// commit writes tx inside the open write transaction and returns its
// commit instant.
func commit(w *wtx, tx *storage.Tx) (int64, error) {
	ctx := w.ctx
	var curs map[[16]byte]*cur
	var floor int64
	for i := range tx.Writes {
		wr := &tx.Writes[i]
		if wr.ExpectVersion == 0 {
			if wr.Delete {
				return 0, storage.ErrNotFound
			}
			continue
		}
		var c cur
		var deleted int
		err := w.queryRow(`SELECT version, deleted, updated_ns, created_ns, model_name, model_version, state
			FROM entities WHERE id = ? AND tenant = ?`, wr.ID[:], tx.Tenant).
			Scan(&c.version, &deleted, &c.updated, &c.created, &c.model.Name, &c.model.Version, &c.state)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, storage.ErrNotFound
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite: reading entity: %w", err)
		}
		c.deleted = deleted != 0
		if c.version != wr.ExpectVersion || c.deleted {
			return 0, storage.ErrConflict
		}
		if curs == nil {
			curs = make(map[[16]byte]*cur, len(tx.Writes))
		}
		curs[wr.ID] = &c
		floor = max(floor, c.updated)
	}
	var carry []carried
	if len(tx.Changes) > 0 {
		var err error
		if carry, err = carryChanges(tx, curs); err != nil {
			return 0, err
		}
	}
	if err := storage.Fault(ctx, "validated"); err != nil {
		return 0, err
	}
	// One instant for the whole transaction, past every revision it
	// follows, so each entity's history stays strictly ordered in time.
	at := w.now()
	if at <= floor {
		at = floor + 1
		w.after(at)
	}
	plan := planAudit(tx)
	var cr creates
	for i := range tx.Writes {
		wr := &tx.Writes[i]
		a := tx.AttributionOf(wr)
		var uk, ei, ek any
		if a != nil {
			uk, ei, ek = a.UserKind, a.ExecID, a.ExecKind
		}
		if wr.ExpectVersion == 0 {
			// Creates are written in runs, many rows a statement (creates.go);
			// a run shares its event code (ev; nil: no event).
			var ev any
			if carry != nil && carry[i].c != nil {
				e := carry[i].event(1, wr.State, wr.Transition)
				if e[2] != nil || e[3] != nil {
					return 0, fmt.Errorf("sqlite: a create's event names another state or transition than its write")
				}
				ev = e[0]
			}
			if !cr.fits(wr, uk, ei, ek, ev) {
				if err := cr.flush(w, tx, &plan); err != nil {
					return 0, err
				}
			}
			cr.add(tx, i, at, uk, ei, ek, ev)
			continue
		}
		if err := cr.flush(w, tx, &plan); err != nil {
			return 0, err
		}
		c := curs[wr.ID]
		change, state, data := chUpdated, wr.State, docArg(wr.Data)
		if wr.Delete {
			change, state, data = chDeleted, c.state, nil
		}
		if _, err := w.exec(`UPDATE entities SET state = ?, version = ?, deleted = ?, updated_ns = ? WHERE id = ? AND tenant = ?`,
			state, c.version+1, b2i(wr.Delete), at, wr.ID[:], tx.Tenant); err != nil {
			return 0, fmt.Errorf("sqlite: updating entity: %w", err)
		}
		var err error
		if carry != nil && carry[i].c != nil {
			ev := carry[i].event(c.version+1, state, wr.Transition)
			_, err = w.exec(insertRevisionEv, wr.ID[:], tx.Tenant, c.version+1, c.model.Name, c.model.Version, state, change,
				tx.ID[:], wr.Transition, tx.User, c.created, at, uk, ei, ek, 0, data, ev[0], ev[1], ev[2], ev[3])
		} else {
			_, err = w.exec(insertRevision, wr.ID[:], tx.Tenant, c.version+1, c.model.Name, c.model.Version, state, change,
				tx.ID[:], wr.Transition, tx.User, c.created, at, uk, ei, ek, 0, data)
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite: inserting revision: %w", err)
		}
		// Later writes of the same entity in this transaction see this one.
		c.version++
		c.deleted = wr.Delete
		c.state = state
	}
	if err := cr.flush(w, tx, &plan); err != nil {
		return 0, err
	}
	if err := storage.Fault(ctx, "written"); err != nil {
		return 0, err
	}
	if storage.TouchesClaims(tx) {
		if err := writeClaims(w, tx, curs); err != nil {
			return 0, err
		}
	}
	if err := writeAudit(w, tx, &plan, at); err != nil {
		return 0, err
	}
	if err := writeTasks(w, tx); err != nil {
		return 0, err
	}
	if err := writeKey(w, tx); err != nil {
		return 0, err
	}
	if err := storage.Fault(ctx, "audited"); err != nil {
		return 0, err
	}
	return at, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// docArg binds a document: never NULL for a written one, even when empty.
func docArg(b []byte) any {
	if b == nil {
		return []byte{}
	}
	return b
}

const revCols = `id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id, created_ns, at_ns, data`

type scanner interface{ Scan(dest ...any) error }

func scanRevision(r scanner) (*storage.Entity, error) {
	var e storage.Entity
	var id, txID []byte
	var change int
	var created, at int64
	if err := r.Scan(&id, &e.Tenant, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &change, &txID, &e.Transition, &e.User,
		&created, &at, &e.Data); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("sqlite: reading entity: %w", err)
	}
	e.ID, e.TxID = id16(id), id16(txID)
	e.ChangeType = changeNames[change]
	e.Deleted = change == chDeleted
	if e.Deleted {
		e.Data = nil
	} else if e.Data == nil {
		e.Data = []byte{}
	}
	e.CreatedAt, e.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, at).UTC()
	return &e, nil
}

func (s *Entities) one(ctx context.Context, query string, args ...any) (*storage.Entity, error) {
	e, found, err := s.db.fast.revision(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	if !found || e.Deleted {
		return nil, storage.ErrNotFound
	}
	return e, nil
}

// Get reads the newest revision: one descent of revisions_id, backwards,
// and its row.
func (s *Entities) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	return s.one(ctx, `SELECT `+revCols+` FROM revisions WHERE id = ? AND tenant = ? ORDER BY version DESC LIMIT 1`, id[:], tenant)
}

func (s *Entities) GetAt(ctx context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	return s.one(ctx, `SELECT `+revCols+` FROM revisions WHERE id = ? AND tenant = ? AND at_ns <= ? ORDER BY version DESC LIMIT 1`,
		id[:], tenant, at.UnixNano())
}

func (s *Entities) GetByTx(ctx context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	return s.one(ctx, `SELECT `+revCols+` FROM revisions WHERE id = ? AND tenant = ? AND tx_id = ? AND change <> 2 ORDER BY version DESC LIMIT 1`,
		id[:], tenant, txID[:])
}

// History reads every revision without its document, with attribution.
func (s *Entities) History(ctx context.Context, tenant string, id [16]byte) ([]storage.Entity, error) {
	rows, err := s.db.query(ctx, `SELECT tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
		created_ns, at_ns, user_kind, exec_id, exec_kind FROM revisions WHERE id = ? AND tenant = ? ORDER BY version`, id[:], tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.Entity
	for rows.Next() {
		e := storage.Entity{ID: id}
		var txID []byte
		var change int
		var created, at int64
		var uk, ei, ek sql.NullString
		if err := rows.Scan(&e.Tenant, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &change, &txID, &e.Transition, &e.User,
			&created, &at, &uk, &ei, &ek); err != nil {
			return nil, fmt.Errorf("sqlite: reading history: %w", err)
		}
		e.TxID = id16(txID)
		e.ChangeType, e.Deleted = changeNames[change], change == chDeleted
		e.CreatedAt, e.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, at).UTC()
		if uk.Valid && ei.Valid && ek.Valid {
			e.Attribution = &storage.Attribution{UserKind: uk.String, ExecID: ei.String, ExecKind: ek.String}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading history: %w", err)
	}
	if len(out) == 0 {
		return nil, storage.ErrNotFound
	}
	return out, nil
}

// current selects a model's live entities with their current revisions.
const current = `SELECT r.id, r.tenant, r.version, r.model_name, r.model_version, r.state, r.change, r.tx_id, r.transition, r.user_id,
	r.created_ns, r.at_ns, r.data
	FROM entities e JOIN revisions r ON r.id = e.id AND r.tenant = e.tenant AND r.version = e.version
	WHERE e.tenant = ? AND e.model_name = ? AND e.model_version = ? AND e.deleted = 0`

// asAt selects the revisions of a model's entities live at an instant:
// each entity's newest revision at or before it, unless that is a delete.
const asAt = `SELECT r.id, r.tenant, r.version, r.model_name, r.model_version, r.state, r.change, r.tx_id, r.transition, r.user_id,
	r.created_ns, r.at_ns, r.data
	FROM entities e JOIN revisions r ON r.id = e.id AND r.tenant = e.tenant
	AND r.version = (SELECT max(x.version) FROM revisions x WHERE x.id = e.id AND x.tenant = e.tenant AND x.at_ns <= ?4)
	WHERE e.tenant = ?1 AND e.model_name = ?2 AND e.model_version = ?3 AND r.change <> 2`

func (s *Entities) each(ctx context.Context, fn func(*storage.Entity) error, query string, args ...any) error {
	rows, err := s.db.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanRevision(rows)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: reading entities: %w", err)
	}
	return nil
}

func (s *Entities) List(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	out := []*storage.Entity{}
	if limit <= 0 {
		return out, nil
	}
	add := func(e *storage.Entity) error { out = append(out, e); return nil }
	var err error
	if at == nil {
		err = s.each(ctx, add, current+` ORDER BY e.id LIMIT ? OFFSET ?`, tenant, model.Name, model.Version, limit, offset)
	} else {
		err = s.each(ctx, add, asAt+` ORDER BY e.id LIMIT ?5 OFFSET ?6`, tenant, model.Name, model.Version, at.UnixNano(), limit, offset)
	}
	return out, err
}

func (s *Entities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	if at == nil {
		return s.each(ctx, fn, current, tenant, model.Name, model.Version)
	}
	return s.each(ctx, fn, asAt, tenant, model.Name, model.Version, at.UnixNano())
}

// DeleteModel tombstones every live entity of a model in one write job:
// a DELETED revision, an EntityChange DELETE audit event each, and the
// model's unique claims freed.
func (s *Entities) DeleteModel(ctx context.Context, tenant string, model storage.ModelKey, txID [16]byte, user string, changes *storage.ModelDeleteChanges) (int64, time.Time, error) {
	var n, at int64
	err := s.db.w.write(ctx, func(w *wtx) error {
		if err := storage.Fault(w.ctx, "validated"); err != nil {
			return err
		}
		at = w.now()
		args := []any{tenant, model.Name, model.Version, at, txID[:], user}
		const live = ` FROM entities WHERE tenant = ?1 AND model_name = ?2 AND model_version = ?3 AND deleted = 0`
		// A watched model's DELETE events ride the tombstones (changes.go):
		// from and to the state each entity had, its body before one
		// version back.
		var ev any
		if changes != nil {
			ev = evDelete | evBack1
			if changes.WantBefore {
				ev = evDelete | evBefore | evBack1
			}
		}
		args = append(args, ev)
		if _, err := w.exec(`INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
			created_ns, at_ns, trio, data, ev, ev_from)
			SELECT id, tenant, version + 1, model_name, model_version, state, 2, ?5, '', ?6, created_ns, max(?4, updated_ns + 1), 0, NULL,
			?7, CASE WHEN ?7 IS NOT NULL THEN state END`+live, args...); err != nil {
			return fmt.Errorf("sqlite: delete model entities: %w", err)
		}
		if _, err := w.exec(`INSERT INTO audit_events (entity_id, tenant, at_ns, seq, tx_id, kind, event_type, state, user_id, details, data)
			SELECT id, tenant, max(?4, updated_ns + 1), 0, ?5, 'EntityChange', 'DELETE', state, ?6, '', NULL`+live, args[:6]...); err != nil {
			return fmt.Errorf("sqlite: delete model audit: %w", err)
		}
		res, err := w.exec(`UPDATE entities SET deleted = 1, version = version + 1, updated_ns = max(?4, updated_ns + 1)
			WHERE tenant = ?1 AND model_name = ?2 AND model_version = ?3 AND deleted = 0`, args[:4]...)
		if err != nil {
			return fmt.Errorf("sqlite: delete model entities: %w", err)
		}
		n, _ = res.RowsAffected()
		if _, err := w.exec(`DELETE FROM unique_claims WHERE tenant = ? AND model_name = ? AND model_version = ?`,
			tenant, model.Name, model.Version); err != nil {
			return fmt.Errorf("sqlite: freeing unique claims: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, time.Unix(0, at).UTC(), nil
}

func (s *Entities) Count(ctx context.Context, tenant string, model storage.ModelKey) (int64, error) {
	var n int64
	err := s.db.queryRow(ctx, `SELECT count(*) FROM entities WHERE tenant = ? AND model_name = ? AND model_version = ? AND deleted = 0`,
		tenant, model.Name, model.Version).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count entities: %w", err)
	}
	return n, nil
}

func (s *Entities) CountByState(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	var rows *sql.Rows
	var err error
	if at == nil {
		rows, err = s.db.query(ctx, `SELECT state, count(*) FROM entities WHERE tenant = ? AND model_name = ? AND model_version = ? AND deleted = 0
			GROUP BY state ORDER BY state`, tenant, model.Name, model.Version)
	} else {
		rows, err = s.db.query(ctx, `SELECT r.state, count(*) FROM entities e JOIN revisions r ON r.id = e.id AND r.tenant = e.tenant
			AND r.version = (SELECT max(x.version) FROM revisions x WHERE x.id = e.id AND x.tenant = e.tenant AND x.at_ns <= ?4)
			WHERE e.tenant = ?1 AND e.model_name = ?2 AND e.model_version = ?3 AND r.change <> 2 GROUP BY r.state ORDER BY r.state`,
			tenant, model.Name, model.Version, at.UnixNano())
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.StateCount
	for rows.Next() {
		sc := storage.StateCount{Model: model}
		if err := rows.Scan(&sc.State, &sc.Count); err != nil {
			return nil, fmt.Errorf("sqlite: count by state: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}
