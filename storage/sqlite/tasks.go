package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"svc/storage"
)

// Tasks is the SQLite storage.ScheduledTasks; Entities.Commit writes the
// rows (Tx.Tasks) in the transaction of the entity change.
type Tasks struct{ db *DB }

// Tasks returns the scheduled-task reader of db.
func (db *DB) Tasks() *Tasks { return &Tasks{db} }

const taskCols = `tenant, id, entity_id, source_state, transition, scheduled_ns, timeout_ms, redispatch_ns, user_id, user_kind, arm_tx`

func scanTask(r scanner) (*storage.ScheduledTask, error) {
	var t storage.ScheduledTask
	var entity, arm []byte
	var sched int64
	var timeout, redispatch sql.NullInt64
	if err := r.Scan(&t.Tenant, &t.ID, &entity, &t.SourceState, &t.Transition, &sched, &timeout, &redispatch, &t.User, &t.UserKind, &arm); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("sqlite: reading scheduled task: %w", err)
	}
	t.EntityID, t.ArmTx = id16(entity), id16(arm)
	t.ScheduledTime = time.Unix(0, sched).UTC()
	if timeout.Valid {
		v := timeout.Int64
		t.TimeoutMs = &v
	}
	if redispatch.Valid {
		t.RedispatchAfter = time.Unix(0, redispatch.Int64).UTC()
	}
	return &t, nil
}

func scanTasks(rows *sql.Rows) ([]storage.ScheduledTask, error) {
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
		return nil, fmt.Errorf("sqlite: reading scheduled tasks: %w", err)
	}
	return out, nil
}

func (s *Tasks) EntityTasks(ctx context.Context, tenant string, entityID [16]byte) ([]storage.ScheduledTask, error) {
	rows, err := s.db.query(ctx, `SELECT `+taskCols+` FROM scheduled_tasks WHERE tenant = ? AND entity_id = ?`, tenant, entityID[:])
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

func (s *Tasks) GetTask(ctx context.Context, tenant, id string) (*storage.ScheduledTask, error) {
	return scanTask(s.db.queryRow(ctx, `SELECT `+taskCols+` FROM scheduled_tasks WHERE tenant = ? AND id = ?`, tenant, id))
}

// ClaimDue reads and stamps the due tasks in one write job: the single
// writer is what keeps two claimers from taking the same task.
func (s *Tasks) ClaimDue(ctx context.Context, now, until time.Time, limit int) ([]storage.ScheduledTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []storage.ScheduledTask
	err := s.db.w.write(ctx, func(w *wtx) error {
		rows, err := w.query(`SELECT `+taskCols+` FROM scheduled_tasks
			WHERE scheduled_ns <= ?1 AND (redispatch_ns IS NULL OR redispatch_ns <= ?1) ORDER BY scheduled_ns LIMIT ?2`,
			now.UnixNano(), limit)
		if err != nil {
			return fmt.Errorf("sqlite: claiming scheduled tasks: %w", err)
		}
		out, err = scanTasks(rows)
		if err != nil {
			return err
		}
		for i := range out {
			if _, err := w.exec(`UPDATE scheduled_tasks SET redispatch_ns = ? WHERE tenant = ? AND id = ?`,
				until.UnixNano(), out[i].Tenant, out[i].ID); err != nil {
				return fmt.Errorf("sqlite: claiming scheduled tasks: %w", err)
			}
			out[i].RedispatchAfter = until.UTC()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ScheduledTime.Before(out[j].ScheduledTime) })
	return out, nil
}

// writeTasks applies tx.Tasks in order inside the commit. A conditional
// delete that finds its task gone or re-armed fails the whole transaction
// with ErrConflict.
func writeTasks(w *wtx, tx *storage.Tx) error {
	for i := range tx.Tasks {
		op := &tx.Tasks[i]
		t := &op.Task
		switch {
		case !op.Delete:
			var timeout any
			if t.TimeoutMs != nil {
				timeout = *t.TimeoutMs
			}
			kind := ""
			if tx.Attribution != nil {
				kind = tx.Attribution.UserKind
			}
			if _, err := w.exec(`INSERT INTO scheduled_tasks (`+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)
				ON CONFLICT (tenant, id) DO UPDATE SET entity_id = excluded.entity_id, source_state = excluded.source_state,
				transition = excluded.transition, scheduled_ns = excluded.scheduled_ns, timeout_ms = excluded.timeout_ms,
				redispatch_ns = NULL, user_id = excluded.user_id, user_kind = excluded.user_kind, arm_tx = excluded.arm_tx`,
				tx.Tenant, t.ID, t.EntityID[:], t.SourceState, t.Transition, t.ScheduledTime.UnixNano(), timeout, tx.User, kind, tx.ID[:]); err != nil {
				return fmt.Errorf("sqlite: writing scheduled tasks: %w", err)
			}
		case op.IfArmTx == [16]byte{}:
			if _, err := w.exec(`DELETE FROM scheduled_tasks WHERE tenant = ? AND id = ?`, tx.Tenant, t.ID); err != nil {
				return fmt.Errorf("sqlite: writing scheduled tasks: %w", err)
			}
		default:
			res, err := w.exec(`DELETE FROM scheduled_tasks WHERE tenant = ? AND id = ? AND arm_tx = ?`, tx.Tenant, t.ID, op.IfArmTx[:])
			if err != nil {
				return fmt.Errorf("sqlite: writing scheduled tasks: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return storage.ErrConflict
			}
		}
	}
	return nil
}
