package storage

import (
	"context"
	"time"
)

// Async search job statuses. RUNNING covers queued and executing; the
// other three are terminal and never change.
const (
	JobRunning    = "RUNNING"
	JobSuccessful = "SUCCESSFUL"
	JobFailed     = "FAILED"
	JobCancelled  = "CANCELLED"
)

// SearchJob is an async search and, once SUCCESSFUL, its snapshot (the
// ordered result ids, kept by the store beside the job).
type SearchJob struct {
	Tenant string
	ID     [16]byte
	Model  ModelKey
	// Condition is the submitted condition JSON; Sort the raw sort values.
	Condition []byte
	Sort      []string
	// At is the job's point in time (submit time when none was given).
	At         time.Time
	Status     string
	Count      int64
	Error      string
	CreatedAt  time.Time
	FinishedAt time.Time // zero while RUNNING
	CalcMillis int64
	Heartbeat  time.Time
	// Epoch increases on every claim; terminal writes and heartbeats of an
	// older epoch are refused, so a job taken over by another executor
	// cannot be finished twice.
	Epoch       int64
	StaleClaims int
}

// JobBeat names a job a node runs, at the epoch it claimed it.
type JobBeat struct {
	Tenant string
	ID     [16]byte
	Epoch  int64
}

// SearchJobs stores async search jobs and snapshots so that any node can
// answer for them. Every method is tenant-scoped where it takes a tenant.
type SearchJobs interface {
	CreateJob(ctx context.Context, j *SearchJob) error
	// GetJob: ErrNotFound when absent or another tenant's.
	GetJob(ctx context.Context, tenant string, id [16]byte) (*SearchJob, error)
	DeleteJob(ctx context.Context, tenant string, id [16]byte) error
	// Heartbeat stamps, in one round trip, every job of beats that is
	// still RUNNING at the beat's epoch, and reports for each beat
	// whether the caller still holds it: false when the job is gone,
	// terminal or taken over at another epoch. A node holds many jobs
	// and stamps them all each interval; one statement per job made a
	// loaded node late enough for others to claim its jobs as stale.
	Heartbeat(ctx context.Context, beats []JobBeat, now time.Time) (held []bool, err error)
	// Finish writes a terminal status (with the result ids when
	// SUCCESSFUL) if the job is still RUNNING at epoch, else ErrConflict.
	Finish(ctx context.Context, j *SearchJob, ids [][16]byte) error
	// Cancel moves a RUNNING job to CANCELLED. It returns the job as it
	// is afterwards, and ErrConflict (with the job) when it was terminal.
	Cancel(ctx context.Context, tenant string, id [16]byte, now time.Time) (*SearchJob, error)
	// ClaimStale takes over at most max RUNNING jobs whose heartbeat (or
	// creation) is before staleBefore: epoch+1, StaleClaims+1, heartbeat now.
	ClaimStale(ctx context.Context, staleBefore, now time.Time, max int) ([]*SearchJob, error)
	// Results returns result ids [offset, offset+limit) in snapshot order.
	Results(ctx context.Context, tenant string, id [16]byte, offset, limit int) ([][16]byte, error)
	// Reap deletes terminal jobs finished before cutoff, with their results.
	Reap(ctx context.Context, cutoff time.Time) (int64, error)
}
