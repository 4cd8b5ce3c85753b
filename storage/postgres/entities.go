package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/storage"
)

// Entities is the PostgreSQL storage.Entities. A transaction is one
// PostgreSQL transaction: updated rows are locked (in id order, so two
// writers never deadlock) and their versions checked before anything is
// written; creates go through COPY when a chunk is large. Revision times
// are taken on the writing node and forced past the entity's previous
// revision, so each entity's history is strictly ordered in time.
type Entities struct{ db *DB }

// Entities returns the entity store of db.
func (db *DB) Entities() *Entities { return &Entities{db} }

// copyThreshold: from this many creates on, COPY beats a batch of INSERTs.
const copyThreshold = 8

var (
	entityCols   = []string{"tenant", "id", "model_name", "model_version", "state", "version", "tx_id", "transition", "created_ns", "updated_ns", "doc"}
	revisionCols = []string{"tenant", "id", "version", "model_name", "model_version", "state", "change_type", "tx_id", "transition", "user_id", "created_ns", "at_ns", "data",
		"user_kind", "exec_id", "exec_kind"}
)

const revSelect = `r.tenant, r.id, r.version, r.model_name, r.model_version, r.state, r.change_type, r.tx_id, r.transition, r.user_id, r.created_ns, r.at_ns, r.data`

func scanRevision(row pgx.Row, withData bool) (*storage.Entity, error) {
	var e storage.Entity
	var created, at int64
	var data []byte
	if err := row.Scan(&e.Tenant, &e.ID, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &e.ChangeType, &e.TxID, &e.Transition, &e.User, &created, &at, &data); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("postgres: reading entity: %w", err)
	}
	if withData {
		e.Data = data
	}
	e.CreatedAt = time.Unix(0, created).UTC()
	e.UpdatedAt = time.Unix(0, at).UTC()
	e.Deleted = e.ChangeType == storage.ChangeDeleted
	return &e, nil
}

// mapErr turns PostgreSQL failures into storage sentinels.
func mapErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01":
			return fmt.Errorf("%w: %s", storage.ErrConflict, pe.Code)
		case "23505":
			return storage.ErrExists
		case "22P05", "22021":
			return fmt.Errorf("%w: %w", storage.ErrUnstorableText, err)
		}
	}
	return err
}

type locked struct {
	id               [16]byte
	version          int64
	deleted          bool
	updated, created int64
	modelName        string
	modelVersion     int
	state            string
}

func (s *Entities) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	if sql, args, now, ok := singleCreate(tx); ok {
		for _, step := range []string{"locked", "created", "written"} {
			if err := storage.Fault(ctx, step); err != nil {
				return time.Time{}, err
			}
		}
		if err := s.db.creates.commit(ctx, tx, now, sql, args); err != nil {
			return time.Time{}, mapErr(err)
		}
		s.db.gin.wrote()
		return time.Unix(0, now).UTC(), nil
	}
	c, err := s.db.acquire(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Release()
	at, err := s.commit(ctx, c, tx)
	if err != nil {
		return time.Time{}, mapErr(err)
	}
	s.db.gin.wrote()
	return at, nil
}

func (s *Entities) commit(ctx context.Context, c *pgxpool.Conn, tx *storage.Tx) (time.Time, error) {
	var updates []int
	var creates []int
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if w.ExpectVersion == 0 {
			if w.Delete {
				return time.Time{}, storage.ErrNotFound
			}
			creates = append(creates, i)
		} else {
			updates = append(updates, i)
		}
	}
	now := time.Now().UnixNano()
	keyed := storage.TouchesClaims(tx)
	ptx, err := c.Begin(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: begin: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))

	var cur map[[16]byte]*locked
	if len(updates) > 0 {
		ids := make([][16]byte, 0, len(updates))
		for _, i := range updates {
			ids = append(ids, tx.Writes[i].ID)
		}
		sort.Slice(ids, func(a, b int) bool { return bytes.Compare(ids[a][:], ids[b][:]) < 0 })
		rows, err := ptx.Query(ctx, `SELECT id, version, deleted, updated_ns, created_ns, model_name, model_version, state
			FROM entities WHERE tenant = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`, tx.Tenant, ids)
		if err != nil {
			return time.Time{}, fmt.Errorf("postgres: locking entities: %w", err)
		}
		cur = make(map[[16]byte]*locked, len(ids))
		for rows.Next() {
			var l locked
			if err := rows.Scan(&l.id, &l.version, &l.deleted, &l.updated, &l.created, &l.modelName, &l.modelVersion, &l.state); err != nil {
				rows.Close()
				return time.Time{}, fmt.Errorf("postgres: locking entities: %w", err)
			}
			cur[l.id] = &l
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return time.Time{}, fmt.Errorf("postgres: locking entities: %w", err)
		}
		for _, i := range updates {
			w := &tx.Writes[i]
			l := cur[w.ID]
			if l == nil {
				return time.Time{}, storage.ErrNotFound
			}
			if l.version != w.ExpectVersion || l.deleted {
				return time.Time{}, storage.ErrConflict
			}
			if l.updated >= now {
				now = l.updated + 1
			}
		}
	}
	if len(tx.Changes) > 0 {
		if err := fillChanges(ctx, ptx, tx, cur); err != nil {
			return time.Time{}, err
		}
	}
	if err := storage.Fault(ctx, "locked"); err != nil {
		return time.Time{}, err
	}
	if len(creates) >= copyThreshold {
		if err := s.copyCreates(ctx, ptx, tx, creates, now); err != nil {
			return time.Time{}, err
		}
	} else if len(creates) > 0 {
		b := &pgx.Batch{}
		for _, i := range creates {
			w := &tx.Writes[i]
			uk, ei, ek := attribution(tx, w)
			b.Queue(insertOne,
				tx.Tenant, w.ID, w.Model.Name, w.Model.Version, w.State, tx.ID, w.Transition, now, jsonDoc(w.Data), tx.User, w.Data, uk, ei, ek)
		}
		if err := ptx.SendBatch(ctx, b).Close(); err != nil {
			return time.Time{}, fmt.Errorf("postgres: inserting entities: %w", err)
		}
	}
	if err := storage.Fault(ctx, "created"); err != nil {
		return time.Time{}, err
	}
	if len(updates) > 0 {
		b := &pgx.Batch{}
		for _, i := range updates {
			w := &tx.Writes[i]
			uk, ei, ek := attribution(tx, w)
			l := cur[w.ID]
			change, state, doc := storage.ChangeUpdated, w.State, any(jsonDoc(w.Data))
			var data []byte = w.Data
			if w.Delete {
				change, doc, data = storage.ChangeDeleted, nil, nil
				state = "" // keep the state the entity had
			}
			b.Queue(`WITH e AS (UPDATE entities SET state = COALESCE(NULLIF($3, ''), state), version = $4, deleted = $5, tx_id = $6,
					transition = $7, updated_ns = $8, doc = $9 WHERE tenant = $1 AND id = $2 RETURNING state)
				INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data,
					user_kind, exec_id, exec_kind)
				SELECT $1, $2, $4, $10, $11, e.state, $12, $6, $7, $13, $14, $8, $15, $16, $17, $18 FROM e`,
				tx.Tenant, w.ID, state, l.version+1, w.Delete, tx.ID, w.Transition, now, doc,
				l.modelName, l.modelVersion, change, tx.User, l.created, data, uk, ei, ek)
		}
		if err := ptx.SendBatch(ctx, b).Close(); err != nil {
			return time.Time{}, fmt.Errorf("postgres: updating entities: %w", err)
		}
	}
	if keyed {
		if err := writeClaims(ctx, ptx, tx, cur); err != nil {
			return time.Time{}, err
		}
	}
	if err := writeAudit(ctx, ptx, tx, now); err != nil {
		return time.Time{}, err
	}
	if err := writeTasks(ctx, ptx, tx); err != nil {
		return time.Time{}, err
	}
	if err := writeChanges(ctx, ptx, tx, now); err != nil {
		return time.Time{}, err
	}
	if err := writeKey(ctx, ptx, tx); err != nil {
		return time.Time{}, err
	}
	if err := storage.Fault(ctx, "written"); err != nil {
		return time.Time{}, err
	}
	if err := ptx.Commit(ctx); err != nil {
		return time.Time{}, fmt.Errorf("postgres: commit: %w", err)
	}
	return time.Unix(0, now).UTC(), nil
}

// singleCreate is tx as one statement when it creates one entity and
// nothing else that needs a transaction of its own (no update, no task
// removal, no unique key): the statement, its arguments and the commit
// instant. Such creates go through group commit, with the create's change
// event when a subscription watches the model (createEvent).
func singleCreate(tx *storage.Tx) (sql string, args []any, now int64, ok bool) {
	if len(tx.Writes) != 1 || tx.Writes[0].ExpectVersion != 0 || tx.Writes[0].Delete || tx.Idempotency != nil ||
		!upsertsOnly(tx.Tasks) || storage.TouchesClaims(tx) {
		return "", nil, 0, false
	}
	event, body := createEvent(tx)
	if len(tx.Changes) > 0 && !event {
		return "", nil, 0, false
	}
	now = time.Now().UnixNano()
	w := &tx.Writes[0]
	uk, ei, ek := attribution(tx, w)
	sql, args = insertOne, []any{tx.Tenant, w.ID, w.Model.Name, w.Model.Version, w.State, tx.ID, w.Transition, now, jsonDoc(w.Data), tx.User, w.Data, uk, ei, ek}
	if len(tx.Audit) > 0 {
		sql, args = insertOneAudited, append(args, auditArgs(tx, now)...)
	}
	if len(tx.Tasks) > 0 {
		sql = insertOneArmed
		if len(tx.Audit) > 0 {
			sql = insertOneAuditedArmed
		}
		args = append(args, taskArgs(tx)...)
	}
	if event {
		sql = withChangeEvent[changeEventKey{sql, body}]
	}
	return sql, args, now, true
}

// createEvent reports whether tx's changes are exactly the CREATE event of
// its one write (what the Recorder records for a create of a watched
// model), which the single-create statement can write from its own
// arguments, and whether the event carries the body.
func createEvent(tx *storage.Tx) (event, body bool) {
	if len(tx.Changes) != 1 {
		return false, false
	}
	c, w := &tx.Changes[0], &tx.Writes[0]
	if c.Kind != storage.KindCreate || c.EntityID != w.ID || c.Model != w.Model || c.FromState != "" || c.ToState != w.State ||
		c.Transition != w.Transition || c.BodyBefore != nil {
		return false, false
	}
	switch {
	case c.BodyAfter == nil:
		return true, false
	case bytes.Equal(c.BodyAfter, w.Data):
		return true, true
	}
	return false, false
}

type changeEventKey struct {
	sql  string
	body bool
}

// withChangeEvent is each single-create statement with the create's change
// event written by a CTE from the statement's own arguments (tenant $1,
// id $2, model $3/$4, state $5, transaction $6, transition $7, instant
// $8, body $11): the event is in the create's statement, so in its
// transaction, and the create keeps group commit.
var withChangeEvent = func() map[changeEventKey]string {
	m := map[changeEventKey]string{}
	for _, sql := range []string{insertOne, insertOneAudited, insertOneArmed, insertOneAuditedArmed} {
		for _, body := range []bool{false, true} {
			after := "NULL::bytea"
			if body {
				after = "$11"
			}
			if !strings.HasPrefix(sql, "WITH ") {
				panic("postgres: a single-create statement does not open with WITH")
			}
			m[changeEventKey{sql, body}] = `WITH ch AS (INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind,
				from_state, to_state, transition, emitted_ns, body_before, body_after)
				VALUES ($1, $3, $4, $2, $6, 'CREATE', '', $5, $7, $8, NULL, ` + after + `)), ` + strings.TrimPrefix(sql, "WITH ")
		}
	}
	return m
}()

// insertOne creates one entity and its first revision in one statement.
const insertOne = `WITH e AS (INSERT INTO entities (tenant, id, model_name, model_version, state, version, tx_id, transition, created_ns, updated_ns, doc)
	VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $8, $9))
	INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data,
		user_kind, exec_id, exec_kind)
	VALUES ($1, $2, 1, $3, $4, $5, 'CREATED', $6, $7, $10, $8, $8, $11, $12, $13, $14)`

// attribution is w's revision attribution as nullable columns.
func attribution(tx *storage.Tx, w *storage.Write) (userKind, execID, execKind *string) {
	if a := tx.AttributionOf(w); a != nil {
		return &a.UserKind, &a.ExecID, &a.ExecKind
	}
	return nil, nil, nil
}

func (s *Entities) copyCreates(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, creates []int, now int64) error {
	n := 0
	_, err := ptx.CopyFrom(ctx, pgx.Identifier{"entities"}, entityCols, pgx.CopyFromFunc(func() ([]any, error) {
		if n == len(creates) {
			return nil, nil
		}
		w := &tx.Writes[creates[n]]
		n++
		return []any{tx.Tenant, w.ID, w.Model.Name, int32(w.Model.Version), w.State, int64(1), tx.ID, w.Transition, now, now, jsonDoc(w.Data)}, nil
	}))
	if err != nil {
		return fmt.Errorf("postgres: copying entities: %w", err)
	}
	if err := storage.Fault(ctx, "copied-entities"); err != nil {
		return err
	}
	n = 0
	_, err = ptx.CopyFrom(ctx, pgx.Identifier{"entity_revisions"}, revisionCols, pgx.CopyFromFunc(func() ([]any, error) {
		if n == len(creates) {
			return nil, nil
		}
		w := &tx.Writes[creates[n]]
		n++
		uk, ei, ek := attribution(tx, w)
		return []any{tx.Tenant, w.ID, int64(1), w.Model.Name, int32(w.Model.Version), w.State, storage.ChangeCreated, tx.ID, w.Transition, tx.User, now, now, w.Data,
			uk, ei, ek}, nil
	}))
	if err != nil {
		return fmt.Errorf("postgres: copying revisions: %w", err)
	}
	return nil
}

func (s *Entities) queryOne(ctx context.Context, sql string, args ...any) (*storage.Entity, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return scanRevision(c.QueryRow(ctx, sql, args...), true)
}

// Get reads the entity's newest revision: one descent of the revisions'
// primary key (id, version, tenant), read backwards, and one heap row. Every
// entity version has its revision, written in the same transaction, so the
// newest one is the entity; a DELETED one means it is gone. (Joining the
// entity row cost a second index descent and heap fetch per read.)
func (s *Entities) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	e, err := s.queryOne(ctx, `SELECT `+revSelect+` FROM entity_revisions r
		WHERE r.id = $2 AND r.tenant = $1 ORDER BY r.version DESC LIMIT 1`, tenant, id)
	if err == nil && e.Deleted {
		return nil, storage.ErrNotFound
	}
	return e, err
}

func (s *Entities) GetAt(ctx context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	e, err := s.queryOne(ctx, `SELECT `+revSelect+` FROM entity_revisions r
		WHERE r.tenant = $1 AND r.id = $2 AND r.at_ns <= $3 ORDER BY r.version DESC LIMIT 1`, tenant, id, at.UnixNano())
	if err == nil && e.Deleted {
		return nil, storage.ErrNotFound
	}
	return e, err
}

func (s *Entities) GetByTx(ctx context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	return s.queryOne(ctx, `SELECT `+revSelect+` FROM entity_revisions r
		WHERE r.tenant = $1 AND r.id = $2 AND r.tx_id = $3 AND r.change_type <> 'DELETED' ORDER BY r.version DESC LIMIT 1`, tenant, id, txID)
}

func (s *Entities) query(ctx context.Context, withData bool, fn func(*storage.Entity) error, sql string, args ...any) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("postgres: query entities: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanRevision(rows, withData)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return rows.Err()
}

// History reads the revisions without their documents, with their
// attribution (only the history shows it, so other reads skip the columns).
func (s *Entities) History(ctx context.Context, tenant string, id [16]byte) ([]storage.Entity, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT r.tenant, r.id, r.version, r.model_name, r.model_version, r.state, r.change_type, r.tx_id, r.transition,
			r.user_id, r.created_ns, r.at_ns, r.user_kind, r.exec_id, r.exec_kind
		FROM entity_revisions r WHERE r.tenant = $1 AND r.id = $2 ORDER BY r.version`, tenant, id)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading history: %w", err)
	}
	defer rows.Close()
	var out []storage.Entity
	for rows.Next() {
		var e storage.Entity
		var created, at int64
		var uk, ei, ek *string
		if err := rows.Scan(&e.Tenant, &e.ID, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &e.ChangeType, &e.TxID, &e.Transition,
			&e.User, &created, &at, &uk, &ei, &ek); err != nil {
			return nil, fmt.Errorf("postgres: reading history: %w", err)
		}
		e.CreatedAt, e.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, at).UTC()
		e.Deleted = e.ChangeType == storage.ChangeDeleted
		if uk != nil && ei != nil && ek != nil {
			e.Attribution = &storage.Attribution{UserKind: *uk, ExecID: *ei, ExecKind: *ek}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: reading history: %w", err)
	}
	if len(out) == 0 {
		return nil, storage.ErrNotFound
	}
	return out, nil
}

// asAt selects the revisions of a model live at $4.
const asAt = `SELECT * FROM (SELECT DISTINCT ON (r.id) ` + revSelect + ` FROM entities e JOIN entity_revisions r
	ON r.tenant = e.tenant AND r.id = e.id
	WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND r.at_ns <= $4
	ORDER BY r.id, r.version DESC) r WHERE r.change_type <> 'DELETED'`

const current = `SELECT ` + revSelect + ` FROM entities e JOIN entity_revisions r
	ON r.tenant = e.tenant AND r.id = e.id AND r.version = e.version
	WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND NOT e.deleted`

func (s *Entities) List(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	out := []*storage.Entity{}
	if limit <= 0 {
		return out, nil
	}
	add := func(e *storage.Entity) error { out = append(out, e); return nil }
	var err error
	if at == nil {
		err = s.query(ctx, true, add, current+` ORDER BY e.id OFFSET $4 LIMIT $5`, tenant, model.Name, model.Version, offset, limit)
	} else {
		err = s.query(ctx, true, add, asAt+` ORDER BY r.id OFFSET $5 LIMIT $6`, tenant, model.Name, model.Version, at.UnixNano(), offset, limit)
	}
	return out, err
}

func (s *Entities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	if at == nil {
		return s.query(ctx, true, fn, current, tenant, model.Name, model.Version)
	}
	return s.query(ctx, true, fn, asAt, tenant, model.Name, model.Version, at.UnixNano())
}

func (s *Entities) DeleteModel(ctx context.Context, tenant string, model storage.ModelKey, txID [16]byte, user string, changes *storage.ModelDeleteChanges) (int64, time.Time, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer c.Release()
	now := time.Now().UnixNano()
	ptx, err := c.Begin(ctx)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("postgres: begin: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	if err := storage.Fault(ctx, "validated"); err != nil {
		return 0, time.Time{}, err
	}
	tag, err := ptx.Exec(ctx, `WITH d AS (UPDATE entities SET deleted = true, version = version + 1, tx_id = $4, transition = '',
			updated_ns = GREATEST($5, updated_ns + 1), doc = NULL
			WHERE tenant = $1 AND model_name = $2 AND model_version = $3 AND NOT deleted
			RETURNING id, version, state, created_ns, updated_ns)
		, ch AS (INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition,
			emitted_ns, body_before, body_after)
			SELECT $1, $2, $3, d.id, $4, 'DELETE', d.state, d.state, '', $5,
			CASE WHEN $8 THEN (SELECT p.data FROM entity_revisions p WHERE p.tenant = $1 AND p.id = d.id AND p.version = d.version - 1) END, NULL
			FROM d WHERE $7 ORDER BY d.id)
		, r AS (INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data)
		SELECT $1, d.id, d.version, $2, $3, d.state, 'DELETED', $4, '', $6, d.created_ns, d.updated_ns, NULL FROM d RETURNING id, state, at_ns)
		`+deleteModelAudit,
		tenant, model.Name, model.Version, txID, now, user, changes != nil, changes != nil && changes.WantBefore)
	if err != nil {
		return 0, time.Time{}, mapErr(fmt.Errorf("postgres: delete model entities: %w", err))
	}
	if _, err := ptx.Exec(ctx, `DELETE FROM unique_claims WHERE tenant = $1 AND model_name = $2 AND model_version = $3`,
		tenant, model.Name, model.Version); err != nil {
		return 0, time.Time{}, mapErr(fmt.Errorf("postgres: freeing unique claims: %w", err))
	}
	if err := ptx.Commit(ctx); err != nil {
		return 0, time.Time{}, mapErr(fmt.Errorf("postgres: commit: %w", err))
	}
	return tag.RowsAffected(), time.Unix(0, now).UTC(), nil
}

func (s *Entities) Count(ctx context.Context, tenant string, model storage.ModelKey) (int64, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	var n int64
	err = c.QueryRow(ctx, `SELECT count(*) FROM entities WHERE tenant = $1 AND model_name = $2 AND model_version = $3 AND NOT deleted`,
		tenant, model.Name, model.Version).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: count entities: %w", err)
	}
	return n, nil
}

func (s *Entities) CountByState(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	var rows pgx.Rows
	if at == nil {
		rows, err = c.Query(ctx, `SELECT state, count(*) FROM entities WHERE tenant = $1 AND model_name = $2 AND model_version = $3 AND NOT deleted
			GROUP BY state ORDER BY state`, tenant, model.Name, model.Version)
	} else {
		rows, err = c.Query(ctx, `SELECT state, count(*) FROM (`+asAt+`) x GROUP BY state ORDER BY state`,
			tenant, model.Name, model.Version, at.UnixNano())
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: count by state: %w", err)
	}
	defer rows.Close()
	var out []storage.StateCount
	for rows.Next() {
		sc := storage.StateCount{Model: model}
		if err := rows.Scan(&sc.State, &sc.Count); err != nil {
			return nil, fmt.Errorf("postgres: count by state: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// jsonDoc hands a document to a jsonb parameter as its JSON text without a
// string copy (pgx sends []byte to json/jsonb verbatim).
func jsonDoc(b []byte) []byte { return b }
