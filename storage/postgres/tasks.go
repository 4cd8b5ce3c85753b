package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// Tasks is the PostgreSQL storage.ScheduledTasks; Entities.Commit writes
// the rows (Tx.Tasks) in the transaction of the entity change.
type Tasks struct{ db *DB }

// Tasks returns the scheduled-task reader of db.
func (db *DB) Tasks() *Tasks { return &Tasks{db} }

const taskCols = `tenant, id, entity_id, source_state, transition, scheduled_ns, timeout_ms, redispatch_ns, user_id, arm_tx`

func scanTask(row pgx.Row) (*storage.ScheduledTask, error) {
	var t storage.ScheduledTask
	var sched int64
	var redispatch *int64
	if err := row.Scan(&t.Tenant, &t.ID, &t.EntityID, &t.SourceState, &t.Transition, &sched, &t.TimeoutMs, &redispatch, &t.User, &t.ArmTx); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("postgres: reading scheduled task: %w", err)
	}
	t.ScheduledTime = time.Unix(0, sched).UTC()
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
		RETURNING t.tenant, t.id, t.entity_id, t.source_state, t.transition, t.scheduled_ns, t.timeout_ms, t.redispatch_ns, t.user_id, t.arm_tx`,
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
			b.Queue(`INSERT INTO scheduled_tasks (`+taskCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9)
				ON CONFLICT (tenant, id) DO UPDATE SET entity_id = EXCLUDED.entity_id, source_state = EXCLUDED.source_state,
				transition = EXCLUDED.transition, scheduled_ns = EXCLUDED.scheduled_ns, timeout_ms = EXCLUDED.timeout_ms,
				redispatch_ns = NULL, user_id = EXCLUDED.user_id, arm_tx = EXCLUDED.arm_tx`,
				tx.Tenant, t.ID, t.EntityID, t.SourceState, t.Transition, t.ScheduledTime.UnixNano(), t.TimeoutMs, tx.User, tx.ID)
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
