package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"svc/storage"
)

// SearchJobs is the SQLite storage.SearchJobs. A snapshot's result ids are
// stored packed, resultChunk ids (16 bytes each) to a row: a page reads
// the one or two chunks it covers, and finishing a job with 100,000
// results writes 98 rows, not 100,000.
type SearchJobs struct{ db *DB }

// SearchJobs returns the async search job store of db.
func (db *DB) SearchJobs() *SearchJobs { return &SearchJobs{db} }

const resultChunk = 1024

var _ storage.SearchJobs = (*SearchJobs)(nil)

const jobCols = `id, tenant, model_name, model_version, condition, sort, at_ns, status, result_count, error, created_ns, finished_ns,
	calc_ms, heartbeat_ns, epoch, stale_claims`

func scanJob(r scanner) (*storage.SearchJob, error) {
	var j storage.SearchJob
	var id []byte
	var sortJSON string
	var at, created, finished, hb int64
	if err := r.Scan(&id, &j.Tenant, &j.Model.Name, &j.Model.Version, &j.Condition, &sortJSON, &at, &j.Status, &j.Count, &j.Error,
		&created, &finished, &j.CalcMillis, &hb, &j.Epoch, &j.StaleClaims); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("sqlite: reading search job: %w", err)
	}
	if err := json.Unmarshal([]byte(sortJSON), &j.Sort); err != nil {
		return nil, fmt.Errorf("sqlite: reading search job: %w", err)
	}
	j.ID = id16(id)
	j.At, j.CreatedAt, j.FinishedAt, j.Heartbeat = fromNS(at), fromNS(created), fromNS(finished), fromNS(hb)
	return &j, nil
}

func (s *SearchJobs) CreateJob(ctx context.Context, j *storage.SearchJob) error {
	sortJSON, err := json.Marshal(j.Sort)
	if err != nil {
		return fmt.Errorf("sqlite: encoding search job: %w", err)
	}
	if j.Sort == nil {
		sortJSON = []byte("null")
	}
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`INSERT INTO search_jobs (`+jobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			j.ID[:], j.Tenant, j.Model.Name, j.Model.Version, docArg(j.Condition), string(sortJSON), ns(j.At), j.Status, j.Count, j.Error,
			ns(j.CreatedAt), ns(j.FinishedAt), j.CalcMillis, ns(j.Heartbeat), j.Epoch, j.StaleClaims)
		if err != nil {
			return fmt.Errorf("sqlite: creating search job: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrExists
		}
		return nil
	})
}

func (s *SearchJobs) GetJob(ctx context.Context, tenant string, id [16]byte) (*storage.SearchJob, error) {
	return scanJob(s.db.queryRow(ctx, `SELECT `+jobCols+` FROM search_jobs WHERE id = ? AND tenant = ?`, id[:], tenant))
}

func wjob(w *wtx, tenant string, id [16]byte) (*storage.SearchJob, error) {
	return scanJob(w.queryRow(`SELECT `+jobCols+` FROM search_jobs WHERE id = ? AND tenant = ?`, id[:], tenant))
}

func (s *SearchJobs) DeleteJob(ctx context.Context, tenant string, id [16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM search_jobs WHERE id = ? AND tenant = ?`, id[:], tenant)
		if err != nil {
			return fmt.Errorf("sqlite: deleting search job: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrNotFound
		}
		if _, err := w.exec(`DELETE FROM search_job_results WHERE job_id = ?`, id[:]); err != nil {
			return fmt.Errorf("sqlite: deleting search job: %w", err)
		}
		return nil
	})
}

func (s *SearchJobs) Heartbeat(ctx context.Context, beats []storage.JobBeat, now time.Time) ([]bool, error) {
	held := make([]bool, len(beats))
	err := s.db.w.write(ctx, func(w *wtx) error {
		for i, b := range beats {
			r, err := w.exec(`UPDATE search_jobs SET heartbeat_ns = ? WHERE id = ? AND tenant = ? AND epoch = ? AND status = 'RUNNING'`,
				ns(now), b.ID[:], b.Tenant, b.Epoch)
			if err != nil {
				return fmt.Errorf("sqlite: search job heartbeat: %w", err)
			}
			n, err := r.RowsAffected()
			if err != nil {
				return fmt.Errorf("sqlite: search job heartbeat: %w", err)
			}
			held[i] = n == 1
		}
		return nil
	})
	return held, err
}

func (s *SearchJobs) Finish(ctx context.Context, j *storage.SearchJob, ids [][16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		cur, err := wjob(w, j.Tenant, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != storage.JobRunning || cur.Epoch != j.Epoch {
			return storage.ErrConflict
		}
		if _, err := w.exec(`UPDATE search_jobs SET status = ?, result_count = ?, error = ?, finished_ns = ?, calc_ms = ? WHERE id = ?`,
			j.Status, j.Count, j.Error, ns(j.FinishedAt), j.CalcMillis, j.ID[:]); err != nil {
			return fmt.Errorf("sqlite: finishing search job: %w", err)
		}
		if _, err := w.exec(`DELETE FROM search_job_results WHERE job_id = ?`, j.ID[:]); err != nil {
			return fmt.Errorf("sqlite: finishing search job: %w", err)
		}
		buf := make([]byte, 0, 16*min(len(ids), resultChunk))
		for c := 0; c*resultChunk < len(ids); c++ {
			buf = buf[:0]
			for _, id := range ids[c*resultChunk : min(len(ids), (c+1)*resultChunk)] {
				buf = append(buf, id[:]...)
			}
			if _, err := w.exec(`INSERT INTO search_job_results (job_id, chunk, ids) VALUES (?, ?, ?)`, j.ID[:], c, buf); err != nil {
				return fmt.Errorf("sqlite: storing search results: %w", err)
			}
		}
		return nil
	})
}

func (s *SearchJobs) Cancel(ctx context.Context, tenant string, id [16]byte, now time.Time) (*storage.SearchJob, error) {
	var out *storage.SearchJob
	err := s.db.w.write(ctx, func(w *wtx) error {
		j, err := wjob(w, tenant, id)
		if err != nil {
			return err
		}
		out = j
		if j.Status != storage.JobRunning {
			return storage.ErrConflict
		}
		if _, err := w.exec(`UPDATE search_jobs SET status = ?, finished_ns = ? WHERE id = ?`, storage.JobCancelled, ns(now), id[:]); err != nil {
			return fmt.Errorf("sqlite: cancelling search job: %w", err)
		}
		j.Status, j.FinishedAt = storage.JobCancelled, now
		return nil
	})
	return out, err
}

func (s *SearchJobs) ClaimStale(ctx context.Context, staleBefore, now time.Time, max int) ([]*storage.SearchJob, error) {
	var out []*storage.SearchJob
	err := s.db.w.write(ctx, func(w *wtx) error {
		out = nil
		rows, err := w.query(`SELECT `+jobCols+` FROM search_jobs WHERE status = 'RUNNING' AND heartbeat_ns < ? LIMIT ?`, ns(staleBefore), max)
		if err != nil {
			return fmt.Errorf("sqlite: claiming stale search jobs: %w", err)
		}
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: claiming stale search jobs: %w", err)
		}
		for _, j := range out {
			j.Epoch++
			j.StaleClaims++
			j.Heartbeat = now
			if _, err := w.exec(`UPDATE search_jobs SET epoch = ?, stale_claims = ?, heartbeat_ns = ? WHERE id = ?`,
				j.Epoch, j.StaleClaims, ns(now), j.ID[:]); err != nil {
				return fmt.Errorf("sqlite: claiming stale search jobs: %w", err)
			}
			if _, err := w.exec(`DELETE FROM search_job_results WHERE job_id = ?`, j.ID[:]); err != nil {
				return fmt.Errorf("sqlite: claiming stale search jobs: %w", err)
			}
		}
		return nil
	})
	return out, err
}

func (s *SearchJobs) Results(ctx context.Context, tenant string, id [16]byte, offset, limit int) ([][16]byte, error) {
	if _, err := s.GetJob(ctx, tenant, id); err != nil {
		return nil, err
	}
	out := [][16]byte{}
	if limit <= 0 || offset < 0 {
		return out, nil
	}
	rows, err := s.db.query(ctx, `SELECT chunk, ids FROM search_job_results WHERE job_id = ? AND chunk >= ? AND chunk <= ? ORDER BY chunk`,
		id[:], offset/resultChunk, (offset+limit-1)/resultChunk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c int
		var ids sql.RawBytes
		if err := rows.Scan(&c, &ids); err != nil {
			return nil, fmt.Errorf("sqlite: reading search results: %w", err)
		}
		for i := 0; i+16 <= len(ids); i += 16 {
			pos := c*resultChunk + i/16
			if pos >= offset && pos < offset+limit {
				out = append(out, id16(ids[i:i+16]))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading search results: %w", err)
	}
	return out, nil
}

func (s *SearchJobs) Reap(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := s.db.w.write(ctx, func(w *wtx) error {
		if _, err := w.exec(`DELETE FROM search_job_results WHERE job_id IN
			(SELECT id FROM search_jobs WHERE status <> 'RUNNING' AND finished_ns < ?)`, ns(cutoff)); err != nil {
			return fmt.Errorf("sqlite: reaping search jobs: %w", err)
		}
		res, err := w.exec(`DELETE FROM search_jobs WHERE status <> 'RUNNING' AND finished_ns < ?`, ns(cutoff))
		if err != nil {
			return fmt.Errorf("sqlite: reaping search jobs: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}
