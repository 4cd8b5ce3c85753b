package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// SearchJobs is the PostgreSQL storage.SearchJobs: jobs and snapshots
// shared by every node on the database.
type SearchJobs struct{ db *DB }

// SearchJobs returns the job store of db.
func (db *DB) SearchJobs() *SearchJobs { return &SearchJobs{db} }

var _ storage.SearchJobs = (*SearchJobs)(nil)

func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func nsOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func notFoundOr(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrNotFound
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

const jobCols = `tenant, id, model_name, model_version, condition, sort, at_ns, status, result_count, error,
	created_ns, finished_ns, calc_ms, heartbeat_ns, epoch, stale_claims`

func scanJob(row pgx.Row) (*storage.SearchJob, error) {
	var j storage.SearchJob
	var at, created, finished, hb int64
	err := row.Scan(&j.Tenant, &j.ID, &j.Model.Name, &j.Model.Version, &j.Condition, &j.Sort, &at, &j.Status, &j.Count,
		&j.Error, &created, &finished, &j.CalcMillis, &hb, &j.Epoch, &j.StaleClaims)
	if err != nil {
		return nil, err
	}
	j.At, j.CreatedAt, j.FinishedAt, j.Heartbeat = unixNano(at), unixNano(created), unixNano(finished), unixNano(hb)
	return &j, nil
}

func (s *SearchJobs) with(ctx context.Context, fn func(c *pgxConn) error) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(&pgxConn{c})
}

func (s *SearchJobs) CreateJob(ctx context.Context, j *storage.SearchJob) error {
	sort := j.Sort
	if sort == nil {
		sort = []string{}
	}
	return s.with(ctx, func(c *pgxConn) error {
		_, err := c.Exec(ctx, `INSERT INTO search_jobs (`+jobCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
			j.Tenant, j.ID, j.Model.Name, j.Model.Version, j.Condition, sort, j.At.UnixNano(), j.Status, j.Count, j.Error,
			j.CreatedAt.UnixNano(), nsOf(j.FinishedAt), j.CalcMillis, j.Heartbeat.UnixNano(), j.Epoch, j.StaleClaims)
		if err != nil {
			return fmt.Errorf("postgres: create search job: %w", mapErr(err))
		}
		return nil
	})
}

func (s *SearchJobs) GetJob(ctx context.Context, tenant string, id [16]byte) (*storage.SearchJob, error) {
	var j *storage.SearchJob
	err := s.with(ctx, func(c *pgxConn) error {
		var err error
		j, err = scanJob(c.QueryRow(ctx, `SELECT `+jobCols+` FROM search_jobs WHERE tenant = $1 AND id = $2`, tenant, id))
		return notFoundOr(err, "get search job")
	})
	return j, err
}

func (s *SearchJobs) DeleteJob(ctx context.Context, tenant string, id [16]byte) error {
	return s.with(ctx, func(c *pgxConn) error {
		tag, err := c.Exec(ctx, `DELETE FROM search_jobs WHERE tenant = $1 AND id = $2`, tenant, id)
		if err != nil {
			return fmt.Errorf("postgres: delete search job: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
}

func (s *SearchJobs) Heartbeat(ctx context.Context, beats []storage.JobBeat, now time.Time) ([]bool, error) {
	held := make([]bool, len(beats))
	if len(beats) == 0 {
		return held, nil
	}
	tenants := make([]string, len(beats))
	ids := make([][16]byte, len(beats))
	epochs := make([]int64, len(beats))
	for i, b := range beats {
		tenants[i], ids[i], epochs[i] = b.Tenant, b.ID, b.Epoch
	}
	err := s.with(ctx, func(c *pgxConn) error {
		// One statement for every job this node holds; ord says which
		// beats still matched a RUNNING row at their epoch.
		rows, err := c.Query(ctx, `UPDATE search_jobs j SET heartbeat_ns = $4
			FROM unnest($1::text[], $2::uuid[], $3::bigint[]) WITH ORDINALITY AS b(tenant, id, epoch, ord)
			WHERE j.tenant = b.tenant AND j.id = b.id AND j.epoch = b.epoch AND j.status = 'RUNNING'
			RETURNING b.ord`, tenants, ids, epochs, now.UnixNano())
		if err != nil {
			return fmt.Errorf("postgres: search job heartbeat: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var ord int64
			if err := rows.Scan(&ord); err != nil {
				return fmt.Errorf("postgres: search job heartbeat: %w", err)
			}
			held[ord-1] = true
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: search job heartbeat: %w", err)
		}
		return nil
	})
	return held, err
}

// Finish writes the terminal row and the result ids in one transaction,
// conditional on RUNNING at the caller's epoch.
func (s *SearchJobs) Finish(ctx context.Context, j *storage.SearchJob, ids [][16]byte) error {
	return s.with(ctx, func(c *pgxConn) error {
		return pgx.BeginFunc(ctx, c.Conn, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE search_jobs SET status = $4, result_count = $5, error = $6, finished_ns = $7, calc_ms = $8
				WHERE tenant = $1 AND id = $2 AND epoch = $3 AND status = 'RUNNING'`,
				j.Tenant, j.ID, j.Epoch, j.Status, j.Count, j.Error, nsOf(j.FinishedAt), j.CalcMillis)
			if err != nil {
				return fmt.Errorf("postgres: finish search job: %w", err)
			}
			if tag.RowsAffected() == 0 {
				return storage.ErrConflict
			}
			if _, err := tx.Exec(ctx, `DELETE FROM search_job_results WHERE job_id = $1`, j.ID); err != nil {
				return fmt.Errorf("postgres: finish search job: %w", err)
			}
			if len(ids) == 0 {
				return nil
			}
			_, err = tx.CopyFrom(ctx, pgx.Identifier{"search_job_results"}, []string{"job_id", "seq", "entity_id"},
				pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) { return []any{j.ID, int64(i), ids[i]}, nil }))
			if err != nil {
				return fmt.Errorf("postgres: storing search results: %w", err)
			}
			return nil
		})
	})
}

func (s *SearchJobs) Cancel(ctx context.Context, tenant string, id [16]byte, now time.Time) (*storage.SearchJob, error) {
	var j *storage.SearchJob
	err := s.with(ctx, func(c *pgxConn) error {
		var err error
		j, err = scanJob(c.QueryRow(ctx, `UPDATE search_jobs SET status = 'CANCELLED', finished_ns = $3
			WHERE tenant = $1 AND id = $2 AND status = 'RUNNING' RETURNING `+jobCols, tenant, id, now.UnixNano()))
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: cancel search job: %w", err)
		}
		j, err = scanJob(c.QueryRow(ctx, `SELECT `+jobCols+` FROM search_jobs WHERE tenant = $1 AND id = $2`, tenant, id))
		if err != nil {
			return notFoundOr(err, "cancel search job")
		}
		return storage.ErrConflict
	})
	return j, err
}

func (s *SearchJobs) ClaimStale(ctx context.Context, staleBefore, now time.Time, max int) ([]*storage.SearchJob, error) {
	var out []*storage.SearchJob
	err := s.with(ctx, func(c *pgxConn) error {
		rows, err := c.Query(ctx, `UPDATE search_jobs SET epoch = epoch + 1, stale_claims = stale_claims + 1, heartbeat_ns = $2
			WHERE id IN (SELECT id FROM search_jobs WHERE status = 'RUNNING' AND heartbeat_ns < $1
				ORDER BY heartbeat_ns LIMIT $3 FOR UPDATE SKIP LOCKED)
			RETURNING `+jobCols, staleBefore.UnixNano(), now.UnixNano(), max)
		if err != nil {
			return fmt.Errorf("postgres: claim stale search jobs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return fmt.Errorf("postgres: claim stale search jobs: %w", err)
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	return out, err
}

func (s *SearchJobs) Results(ctx context.Context, tenant string, id [16]byte, offset, limit int) ([][16]byte, error) {
	out := [][16]byte{}
	err := s.with(ctx, func(c *pgxConn) error {
		rows, err := c.Query(ctx, `SELECT r.entity_id FROM search_job_results r JOIN search_jobs j ON j.id = r.job_id
			WHERE j.tenant = $1 AND r.job_id = $2 AND r.seq >= $3 ORDER BY r.seq LIMIT $4`, tenant, id, offset, limit)
		if err != nil {
			return fmt.Errorf("postgres: search results: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e [16]byte
			if err := rows.Scan(&e); err != nil {
				return fmt.Errorf("postgres: search results: %w", err)
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

func (s *SearchJobs) Reap(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := s.with(ctx, func(c *pgxConn) error {
		tag, err := c.Exec(ctx, `DELETE FROM search_jobs WHERE status <> 'RUNNING' AND finished_ns < $1`, cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("postgres: reap search jobs: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	return n, err
}
