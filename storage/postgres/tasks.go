package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// Tasks is the PostgreSQL storage.ScheduledTasks; Entities.Commit writes
// the rows (Tx.Tasks) in the transaction of the entity change.
type Tasks struct{ db *DB }

// Tasks returns the scheduled-task reader of db.
func (db *DB) Tasks() *Tasks { return &Tasks{db} }

const taskCols = `tenant, id, entity_id, source_state, transition, scheduled_ns, timeout_ms, redispatch_ns, user_id, arm_tx, user_kind`

func scanTask(row pgx.Row) (*storage.ScheduledTask, error) {
	var t storage.ScheduledTask
	var sched int64
	var redispatch *int64
	var kind *string
	if err := row.Scan(&t.Tenant, &t.ID, &t.EntityID, &t.SourceState, &t.Transition, &sched, &t.TimeoutMs, &redispatch, &t.User, &t.ArmTx, &kind); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("postgres: reading scheduled task: %w", err)
	}
	t.ScheduledTime = time.Unix(0, sched).UTC()
	if kind != nil {
		t.UserKind = *kind
	}
	if redispatch != nil {
		t.RedispatchAfter = time.Unix(0, *redispatch).UTC()
	}
	return &t, nil
}

func (s *Tasks) queryTasks(ctx context.Context, sql string, args ...any) ([]storage.ScheduledTask, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return nil, mapErr(fmt.Errorf("postgres: query scheduled tasks: %w", err))
	}
	defer rows.Close()
	out := []storage.ScheduledTask{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(fmt.Errorf("postgres: query scheduled tasks: %w", err))
	}
	return out, nil
}

func (s *Tasks) EntityTasks(ctx context.Context, tenant string, entityID [16]byte) ([]storage.ScheduledTask, error) {
	return s.queryTasks(ctx, `SELECT `+taskCols+` FROM scheduled_tasks WHERE tenant = $1 AND entity_id = $2`, tenant, entityID)
}

func (s *Tasks) GetTask(ctx context.Context, tenant, id string) (*storage.ScheduledTask, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return scanTask(c.QueryRow(ctx, `SELECT `+taskCols+` FROM scheduled_tasks WHERE tenant = $1 AND id = $2`, tenant, id))
}

// ClaimDue stamps the due rows in one statement. SKIP LOCKED hands rows a
// concurrent claimer is stamping to nobody else, and the stamp itself
// keeps them from every later scan until it passes, so two schedulers on
// one database never claim the same task at once.
func (s *Tasks) ClaimDue(ctx context.Context, now, until time.Time, limit int) ([]storage.ScheduledTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := s.queryTasks(ctx, `UPDATE scheduled_tasks t SET redispatch_ns = $2
		FROM (SELECT tenant, id FROM scheduled_tasks
			WHERE scheduled_ns <= $1 AND (redispatch_ns IS NULL OR redispatch_ns <= $1)
			ORDER BY scheduled_ns LIMIT $3 FOR UPDATE SKIP LOCKED) d
		WHERE t.tenant = d.tenant AND t.id = d.id
		RETURNING t.tenant, t.id, t.entity_id, t.source_state, t.transition, t.scheduled_ns, t.timeout_ms, t.redispatch_ns, t.user_id, t.arm_tx, t.user_kind`,
		now.UnixNano(), until.UnixNano(), limit)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ScheduledTime.Before(out[j].ScheduledTime) })
	return out, nil
}

// writeTasks applies tx.Tasks in order inside the commit transaction. A
// conditional delete that finds its task gone or re-armed fails the whole
// transaction with ErrConflict.
func writeTasks(ctx context.Context, ptx pgx.Tx, tx *storage.Tx) error {
	if len(tx.Tasks) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for i := range tx.Tasks {
		op := &tx.Tasks[i]
		t := &op.Task
		switch {
		case !op.Delete:
			b.Queue(`INSERT INTO scheduled_tasks (`+taskCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9, $10)
				ON CONFLICT (tenant, id) DO UPDATE SET entity_id = EXCLUDED.entity_id, source_state = EXCLUDED.source_state,
				transition = EXCLUDED.transition, scheduled_ns = EXCLUDED.scheduled_ns, timeout_ms = EXCLUDED.timeout_ms,
				redispatch_ns = NULL, user_id = EXCLUDED.user_id, arm_tx = EXCLUDED.arm_tx, user_kind = EXCLUDED.user_kind`,
				tx.Tenant, t.ID, t.EntityID, t.SourceState, t.Transition, t.ScheduledTime.UnixNano(), t.TimeoutMs, tx.User, tx.ID, userKind(tx))
		case op.IfArmTx == [16]byte{}:
			b.Queue(`DELETE FROM scheduled_tasks WHERE tenant = $1 AND id = $2`, tx.Tenant, t.ID)
		default:
			b.Queue(`DELETE FROM scheduled_tasks WHERE tenant = $1 AND id = $2 AND arm_tx = $3`, tx.Tenant, t.ID, op.IfArmTx)
		}
	}
	br := ptx.SendBatch(ctx, b)
	for i := range tx.Tasks {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return fmt.Errorf("postgres: writing scheduled tasks: %w", err)
		}
		if op := &tx.Tasks[i]; op.Delete && op.IfArmTx != ([16]byte{}) && tag.RowsAffected() != 1 {
			br.Close()
			return storage.ErrConflict
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("postgres: writing scheduled tasks: %w", err)
	}
	return nil
}

// userKind is the kind of tx's principal, which the tasks it arms keep
// (NULL when tx records no attribution).
func userKind(tx *storage.Tx) *string {
	if tx.Attribution == nil {
		return nil
	}
	return &tx.Attribution.UserKind
}

// upsertsOnly reports whether ops only arm tasks (a create's arming), which
// the single-statement create can carry.
func upsertsOnly(ops []storage.TaskOp) bool {
	for i := range ops {
		if ops[i].Delete {
			return false
		}
	}
	return true
}

// Single creates that arm tasks, prepared once.
var (
	insertOneArmed, _        = withTaskInsert(insertOne, nextParam(insertOne))
	insertOneAuditedArmed, _ = withTaskInsert(insertOneAudited, nextParam(insertOneAudited))
)

// nextParam is one past the highest $n placeholder of sql: the task
// columns follow whatever the create statement already binds, so a column
// added to it cannot shift them onto its own arguments.
func nextParam(sql string) int {
	max := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] != '$' {
			continue
		}
		n, j := 0, i+1
		for ; j < len(sql) && sql[j] >= '0' && sql[j] <= '9'; j++ {
			n = n*10 + int(sql[j]-'0')
		}
		if n > max {
			max = n
		}
		i = j - 1
	}
	return max + 1
}

// createMarker ends the entities CTE both single-create statements open
// with; the task insert joins the WITH list right after it.
const createMarker = "VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $8, $9))"

// withTaskInsert adds the arming of tx.Tasks (taskArgs, from parameter
// first on) to a single-create statement, keeping its one round trip. $1
// is the tenant, $6 the transaction, $10 the user in both statements.
// False when the statement lacks the marker (the caller then takes the
// transaction path).
func withTaskInsert(sql string, first int) (string, bool) {
	i := strings.Index(sql, createMarker)
	if i < 0 {
		return "", false
	}
	i += len(createMarker)
	cte := fmt.Sprintf(`, t AS (INSERT INTO scheduled_tasks (`+taskCols+`)
	SELECT $1, x.id, x.eid, x.src, x.tr, x.sched, NULLIF(x.tmo, -1), NULL, $10, $6, $12
	FROM unnest($%d::text::text[], $%d::text::uuid[], $%d::text::text[], $%d::text::text[], $%d::text::bigint[], $%d::text::bigint[]) AS x(id, eid, src, tr, sched, tmo)
	ON CONFLICT (tenant, id) DO UPDATE SET entity_id = EXCLUDED.entity_id, source_state = EXCLUDED.source_state,
	transition = EXCLUDED.transition, scheduled_ns = EXCLUDED.scheduled_ns, timeout_ms = EXCLUDED.timeout_ms,
	redispatch_ns = NULL, user_id = EXCLUDED.user_id, arm_tx = EXCLUDED.arm_tx, user_kind = EXCLUDED.user_kind)`, first, first+1, first+2, first+3, first+4, first+5)
	return sql[:i] + cte + sql[i:], true
}

// taskArgs are the six column arrays of tx.Tasks (all upserts), each one
// array literal in text like auditArgs (pgx's binary arrays box every
// element); a nil timeout travels as -1 (timeouts are never negative).
func taskArgs(tx *storage.Tx) []any {
	buf := make([]byte, 0, len(tx.Tasks)*128)
	out := make([]any, 0, 6)
	col := func(elem func(b []byte, t *storage.ScheduledTask) []byte) {
		start := len(buf)
		buf = append(buf, '{')
		for i := range tx.Tasks {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = elem(buf, &tx.Tasks[i].Task)
		}
		buf = append(buf, '}')
		out = append(out, string(buf[start:]))
	}
	col(func(b []byte, t *storage.ScheduledTask) []byte { return appendArrayText(b, t.ID) })
	col(func(b []byte, t *storage.ScheduledTask) []byte { return appendUUIDText(b, t.EntityID) })
	col(func(b []byte, t *storage.ScheduledTask) []byte { return appendArrayText(b, t.SourceState) })
	col(func(b []byte, t *storage.ScheduledTask) []byte { return appendArrayText(b, t.Transition) })
	col(func(b []byte, t *storage.ScheduledTask) []byte {
		return strconv.AppendInt(b, t.ScheduledTime.UnixNano(), 10)
	})
	col(func(b []byte, t *storage.ScheduledTask) []byte {
		if t.TimeoutMs == nil {
			return append(b, "-1"...)
		}
		return strconv.AppendInt(b, *t.TimeoutMs, 10)
	})
	return out
}
