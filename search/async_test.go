package search

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"svc/internal/await"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
)

// gatedSearcher blocks SearchIDs until released or cancelled, so tests can
// hold jobs RUNNING.
type gatedSearcher struct {
	storage.Searcher
	gate    chan struct{}
	started chan struct{}
}

func (g *gatedSearcher) SearchIDs(ctx context.Context, q *storage.SearchQuery) ([][16]byte, error) {
	g.started <- struct{}{}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Searcher.SearchIDs(ctx, q)
}

func asyncService(t *testing.T, jobs storage.SearchJobs, opt Options) (*Service, *gatedSearcher) {
	t.Helper()
	ms := memory.NewModels()
	ctx := context.Background()
	if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: storage.ModelKey{Name: "m", Version: 1}, State: "LOCKED",
		Schema: []byte(`{"$":{".x":"INTEGER"}}`)}); err != nil {
		t.Fatal(err)
	}
	g := &gatedSearcher{Searcher: memory.NewSearch(memory.NewEntities()), gate: make(chan struct{}), started: make(chan struct{}, 16)}
	if opt.OnBackgroundErr == nil {
		opt.OnBackgroundErr = func(what string, err error) { t.Errorf("%s: %v", what, err) }
	}
	s := New(ms, g, jobs, opt)
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return s, g
}

var allReq = &AsyncRequest{Tenant: "A", Model: storage.ModelKey{Name: "m", Version: 1}, Condition: []byte(`{"type":"group","operator":"AND","conditions":[]}`)}

func waitStatus(t *testing.T, s *Service, id [16]byte, want string) *storage.SearchJob {
	t.Helper()
	return await.Value(t, await.Long, func() (*storage.SearchJob, bool) {
		st, err := s.JobStatus(context.Background(), "A", id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Job, st.Job.Status == want
	}, "job status %s", want)
}

func code(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code.String()
	}
	return ""
}

func TestAsyncCapacityAndCancel(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			var jobs storage.SearchJobs = memory.NewSearchJobs()
			if engine == "postgres" {
				jobs = openPG(t).SearchJobs()
			}
			if engine == "sqlite" {
				jobs = sqlitetest.Open(t).SearchJobs()
			}
			s, g := asyncService(t, jobs, Options{Workers: 1, Queue: 1, MaxPerTenant: 2, Heartbeat: 20 * time.Millisecond,
				StaleAfter: time.Hour, MaxAttempts: 3, SnapshotTTL: time.Hour, ReapInterval: time.Hour})
			ctx := context.Background()
			a, err := s.Submit(ctx, allReq)
			if err != nil {
				t.Fatal(err)
			}
			<-g.started // a executes, holding the only worker
			b, err := s.Submit(ctx, allReq)
			if err != nil {
				t.Fatal(err)
			}
			// The tenant's cap (2) is reached: a third is refused, retryable,
			// and leaves no job behind.
			_, err = s.Submit(ctx, allReq)
			if e, ok := apierr.As(err); !ok || e.Code.String() != "SEARCH_QUEUE_FULL" || !e.Retryable {
				t.Fatalf("third submit: %v", err)
			}
			// Cancelling a queued job: CANCELLED, never executed.
			if err := s.Cancel(ctx, "A", b); err != nil {
				t.Fatal(err)
			}
			if err := s.Cancel(ctx, "A", b); code(err) != "SEARCH_JOB_ALREADY_TERMINAL" {
				t.Fatalf("second cancel: %v", err)
			}
			if err := s.Cancel(ctx, "B", a); code(err) != "SEARCH_JOB_NOT_FOUND" {
				t.Fatalf("cancel by another tenant: %v", err)
			}
			if _, err := s.Results(ctx, "A", a, 0, 10); code(err) != apierr.BadRequest.String() {
				t.Fatalf("results while RUNNING: %v", err)
			}
			close(g.gate)
			j := waitStatus(t, s, a, storage.JobSuccessful)
			if j.FinishedAt.IsZero() {
				t.Fatal("no finish time")
			}
			if j := waitStatus(t, s, b, storage.JobCancelled); j.Count != 0 {
				t.Fatalf("cancelled job %+v", j)
			}
			// Capacity is given back once jobs end.
			if !await.Poll(await.Long, func() bool {
				_, err = s.Submit(ctx, allReq)
				return err == nil || code(err) != "SEARCH_QUEUE_FULL"
			}) || err != nil {
				t.Fatalf("submit after jobs ended: %v", err)
			}
		})
	}
}

func TestAsyncStaleAndReap(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			var jobs storage.SearchJobs = memory.NewSearchJobs()
			if engine == "postgres" {
				jobs = openPG(t).SearchJobs()
			}
			if engine == "sqlite" {
				jobs = sqlitetest.Open(t).SearchJobs()
			}
			ctx := context.Background()
			old := time.Now().Add(-time.Hour).UTC()
			// Jobs whose executor died: one lost twice before (fails at the
			// third loss), one lost for the first time (runs again here).
			mk := func(claims int) [16]byte {
				var id [16]byte
				rand.Read(id[:])
				if err := jobs.CreateJob(ctx, &storage.SearchJob{Tenant: "A", ID: id, Model: allReq.Model, Condition: allReq.Condition,
					At: old, Status: storage.JobRunning, CreatedAt: old, Heartbeat: old, Epoch: 1, StaleClaims: claims}); err != nil {
					t.Fatal(err)
				}
				return id
			}
			lost, retry := mk(2), mk(0)
			// Both jobs' heartbeats are an hour old: a 30 min staleness
			// claims them at the first sweep and never takes this node's
			// own running job from it, however late a loaded machine
			// makes a heartbeat.
			// The service's clock runs ahead by shift: a finished job
			// stays until the test moves the clock past its TTL, so a
			// loaded machine cannot reap it before its status is seen.
			var shift atomic.Int64
			s, g := asyncService(t, jobs, Options{Workers: 1, Queue: 4, MaxPerTenant: 4, Heartbeat: 20 * time.Millisecond,
				StaleAfter: 30 * time.Minute, MaxAttempts: 3, SnapshotTTL: time.Hour, ReapInterval: 50 * time.Millisecond,
				Now: func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }})
			close(g.gate)
			if j := waitStatus(t, s, lost, storage.JobFailed); j.Error == "" {
				t.Fatalf("stale job failed without a reason: %+v", j)
			}
			waitStatus(t, s, retry, storage.JobSuccessful)
			// Terminal jobs disappear after TTL plus a reap interval.
			shift.Store(int64(2 * time.Hour))
			await.Until(t, await.Long, func() bool {
				_, err := s.JobStatus(ctx, "A", retry)
				if err != nil && code(err) != "SEARCH_JOB_NOT_FOUND" && !errors.Is(err, storage.ErrNotFound) {
					t.Fatal(err)
				}
				return code(err) == "SEARCH_JOB_NOT_FOUND"
			}, "finished job to be reaped")
		})
	}
}

// TestAsyncRemoteCancelAndStop: a cancel written by another node reaches
// the executing job through the heartbeat and frees its worker; Stop fails
// the jobs this node still holds and refuses new ones.
func TestAsyncRemoteCancelAndStop(t *testing.T) {
	jobs := memory.NewSearchJobs()
	s, g := asyncService(t, jobs, Options{Workers: 1, Queue: 2, MaxPerTenant: 4, Heartbeat: 10 * time.Millisecond,
		StaleAfter: time.Hour, MaxAttempts: 3, SnapshotTTL: time.Hour, ReapInterval: time.Hour})
	ctx := context.Background()
	a, err := s.Submit(ctx, allReq)
	if err != nil {
		t.Fatal(err)
	}
	<-g.started
	if _, err := jobs.Cancel(ctx, "A", a, time.Now()); err != nil { // as another node would
		t.Fatal(err)
	}
	b, err := s.Submit(ctx, allReq)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.started: // the only worker let go of a and took b
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled job kept its worker")
	}
	waitStatus(t, s, a, storage.JobCancelled)
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s.Stop(stopCtx)
	if j := waitStatus(t, s, b, storage.JobFailed); j.Error == "" {
		t.Fatalf("job failed at shutdown without a reason: %+v", j)
	}
	if _, err := s.Submit(ctx, allReq); code(err) != "SEARCH_QUEUE_FULL" {
		t.Fatalf("submit after Stop: %v", err)
	}
}
