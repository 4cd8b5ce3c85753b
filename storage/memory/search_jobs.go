package memory

import (
	"context"
	"sync"
	"time"

	"svc/storage"
)

// SearchJobs is the in-memory storage.SearchJobs (one node only).
type SearchJobs struct {
	mu   sync.Mutex
	jobs map[[16]byte]*jobRec
}

type jobRec struct {
	job storage.SearchJob
	ids [][16]byte
}

func NewSearchJobs() *SearchJobs { return &SearchJobs{jobs: map[[16]byte]*jobRec{}} }

var _ storage.SearchJobs = (*SearchJobs)(nil)

func (s *SearchJobs) find(tenant string, id [16]byte) *jobRec {
	r := s.jobs[id]
	if r == nil || r.job.Tenant != tenant {
		return nil
	}
	return r
}

func copyJob(j *storage.SearchJob) *storage.SearchJob {
	c := *j
	c.Condition = append([]byte(nil), j.Condition...)
	c.Sort = append([]string(nil), j.Sort...)
	return &c
}

func (s *SearchJobs) CreateJob(_ context.Context, j *storage.SearchJob) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return storage.ErrExists
	}
	s.jobs[j.ID] = &jobRec{job: *copyJob(j)}
	return nil
}

func (s *SearchJobs) GetJob(_ context.Context, tenant string, id [16]byte) (*storage.SearchJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.find(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	return copyJob(&r.job), nil
}

func (s *SearchJobs) DeleteJob(_ context.Context, tenant string, id [16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(tenant, id) == nil {
		return storage.ErrNotFound
	}
	delete(s.jobs, id)
	return nil
}

func (s *SearchJobs) Heartbeat(_ context.Context, beats []storage.JobBeat, now time.Time) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := make([]bool, len(beats))
	for i, b := range beats {
		r := s.find(b.Tenant, b.ID)
		if r == nil || r.job.Epoch != b.Epoch || r.job.Status != storage.JobRunning {
			continue
		}
		r.job.Heartbeat = now
		held[i] = true
	}
	return held, nil
}

func (s *SearchJobs) Finish(_ context.Context, j *storage.SearchJob, ids [][16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.find(j.Tenant, j.ID)
	if r == nil {
		return storage.ErrNotFound
	}
	if r.job.Status != storage.JobRunning || r.job.Epoch != j.Epoch {
		return storage.ErrConflict
	}
	r.job.Status, r.job.Count, r.job.Error = j.Status, j.Count, j.Error
	r.job.FinishedAt, r.job.CalcMillis = j.FinishedAt, j.CalcMillis
	r.ids = append([][16]byte(nil), ids...)
	return nil
}

func (s *SearchJobs) Cancel(_ context.Context, tenant string, id [16]byte, now time.Time) (*storage.SearchJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.find(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	if r.job.Status != storage.JobRunning {
		return copyJob(&r.job), storage.ErrConflict
	}
	r.job.Status, r.job.FinishedAt = storage.JobCancelled, now
	return copyJob(&r.job), nil
}

func (s *SearchJobs) ClaimStale(_ context.Context, staleBefore, now time.Time, max int) ([]*storage.SearchJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*storage.SearchJob
	for _, r := range s.jobs {
		if len(out) >= max {
			break
		}
		if r.job.Status != storage.JobRunning || !r.job.Heartbeat.Before(staleBefore) {
			continue
		}
		r.job.Epoch++
		r.job.StaleClaims++
		r.job.Heartbeat = now
		r.ids = nil
		out = append(out, copyJob(&r.job))
	}
	return out, nil
}

func (s *SearchJobs) Results(_ context.Context, tenant string, id [16]byte, offset, limit int) ([][16]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.find(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	if offset >= len(r.ids) || limit <= 0 {
		return [][16]byte{}, nil
	}
	end := min(offset+limit, len(r.ids))
	return append([][16]byte(nil), r.ids[offset:end]...), nil
}

func (s *SearchJobs) Reap(_ context.Context, cutoff time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for id, r := range s.jobs {
		if r.job.Status != storage.JobRunning && r.job.FinishedAt.Before(cutoff) {
			delete(s.jobs, id)
			n++
		}
	}
	return n, nil
}
