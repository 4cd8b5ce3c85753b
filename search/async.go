package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
	"svc/workflow"
)

// pool runs async jobs: a bounded queue in front of a fixed set of
// workers, a per-tenant cap on in-flight jobs of this node, one heartbeat
// loop stamping every job this node holds and claiming stale ones, and a
// reaper deleting expired snapshots. Start launches the goroutines; Stop
// ends them.
type pool struct {
	s     *Service
	queue chan *task

	mu        sync.Mutex
	closed    bool
	perTenant map[string]int
	tasks     map[[16]byte]*task

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// task is a job held by this node, queued or executing.
type task struct {
	job *storage.SearchJob
	q   *storage.SearchQuery
	// auth is who function conditions are dispatched for: the submitter,
	// or systemAuth for a job taken over from another node.
	auth   workflow.Auth
	ctx    context.Context
	cancel context.CancelFunc
}

func newPool(s *Service) *pool {
	return &pool{s: s, queue: make(chan *task, s.opt.Queue), perTenant: map[string]int{},
		tasks: map[[16]byte]*task{}, stop: make(chan struct{})}
}

// Start launches the workers, the heartbeat/stale loop and the reaper.
func (s *Service) Start() {
	if s.pool == nil {
		return
	}
	p := s.pool
	for i := 0; i < s.opt.Workers; i++ {
		p.wg.Add(1)
		go p.worker()
	}
	p.wg.Add(2)
	go p.heartbeatLoop()
	go p.reapLoop()
}

// Stop refuses new submits, cancels queued and running jobs, waits for the
// goroutines (at most ctx) and marks the jobs this node still held FAILED.
func (s *Service) Stop(ctx context.Context) {
	if s.pool == nil {
		return
	}
	p := s.pool
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		held := make([]*task, 0, len(p.tasks))
		for _, t := range p.tasks {
			held = append(held, t)
			t.cancel()
		}
		p.mu.Unlock()
		close(p.stop)
		done := make(chan struct{})
		go func() { p.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
		for _, t := range held {
			j := *t.job
			j.Status, j.Error, j.FinishedAt = storage.JobFailed, "search interrupted by shutdown", s.opt.Now().UTC()
			_ = s.jobs.Finish(context.WithoutCancel(ctx), &j, nil)
		}
	})
}

func queueFull() error {
	e := apierr.New(apierr.SearchQueueFull, "async search queue is full — retry later")
	e.Retryable = true
	return e
}

// AsyncRequest is an async submit.
type AsyncRequest struct {
	Tenant    string
	Model     storage.ModelKey
	Condition []byte
	Sort      []string
	At        *time.Time
}

// Submit validates r, stores a RUNNING job and queues it; the job id is a
// version-1 time UUID.
func (s *Service) Submit(ctx context.Context, r *AsyncRequest) ([16]byte, error) {
	q, err := s.prepare(ctx, r.Tenant, r.Model, r.Condition, r.Sort, nil)
	if err != nil {
		return [16]byte{}, err
	}
	now := s.opt.Now().UTC()
	at := now
	if r.At != nil {
		at = *r.At
	}
	q.At = &at
	p := s.pool
	p.mu.Lock()
	if p.closed || (s.opt.MaxPerTenant > 0 && p.perTenant[r.Tenant] >= s.opt.MaxPerTenant) {
		p.mu.Unlock()
		return [16]byte{}, queueFull()
	}
	p.perTenant[r.Tenant]++
	p.mu.Unlock()

	id, err := uuid.NewUUID()
	if err != nil {
		p.release(r.Tenant, [16]byte{})
		return [16]byte{}, fmt.Errorf("search: job id: %w", err)
	}
	sort := append([]string(nil), r.Sort...)
	j := &storage.SearchJob{Tenant: r.Tenant, ID: id, Model: r.Model, Condition: append([]byte(nil), r.Condition...),
		Sort: sort, At: at, Status: storage.JobRunning, CreatedAt: now, Heartbeat: now, Epoch: 1}
	if err := s.jobs.CreateJob(ctx, j); err != nil {
		p.release(r.Tenant, [16]byte{})
		return [16]byte{}, err
	}
	if !p.enqueue(j, q, authOf(ctx)) {
		_ = s.jobs.DeleteJob(context.WithoutCancel(ctx), r.Tenant, id)
		p.release(r.Tenant, [16]byte{})
		return [16]byte{}, queueFull()
	}
	return id, nil
}

// enqueue registers j and hands it to the queue without blocking; the
// caller has charged the tenant's count.
func (p *pool) enqueue(j *storage.SearchJob, q *storage.SearchQuery, auth workflow.Auth) bool {
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{job: j, q: q, auth: auth, ctx: ctx, cancel: cancel}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cancel()
		return false
	}
	p.tasks[j.ID] = t
	p.mu.Unlock()
	select {
	case p.queue <- t:
		return true
	default:
		p.mu.Lock()
		delete(p.tasks, j.ID)
		p.mu.Unlock()
		cancel()
		return false
	}
}

func (p *pool) release(tenant string, id [16]byte) {
	p.mu.Lock()
	if t := p.tasks[id]; t != nil {
		t.cancel()
		delete(p.tasks, id)
	}
	if p.perTenant[tenant]--; p.perTenant[tenant] <= 0 {
		delete(p.perTenant, tenant)
	}
	p.mu.Unlock()
}

func (p *pool) worker() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case t := <-p.queue:
			p.run(t)
		}
	}
}

// run executes one job and writes its terminal state on a context that a
// racing cancel cannot take away; a write refused because the job moved
// on (cancelled, taken over) is not an error.
func (p *pool) run(t *task) {
	s := p.s
	j := *t.job
	defer p.release(j.Tenant, j.ID)
	if t.ctx.Err() != nil {
		return
	}
	start := s.opt.Now()
	ids, err := p.execute(t)
	if t.ctx.Err() != nil {
		return
	}
	fin := s.opt.Now().UTC()
	j.FinishedAt, j.CalcMillis = fin, fin.Sub(start).Milliseconds()
	if err != nil {
		j.Status, j.Error = storage.JobFailed, safeText(err)
		ids = nil
	} else {
		j.Status, j.Count = storage.JobSuccessful, int64(len(ids))
	}
	if err := s.jobs.Finish(context.Background(), &j, ids); err != nil && !errors.Is(err, storage.ErrConflict) {
		s.opt.OnBackgroundErr("finishing search job", err)
	}
}

func (p *pool) execute(t *task) (ids [][16]byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("search: panic: %v", r)
		}
	}()
	q := t.q
	if q == nil {
		// A job taken over from another node: compile it again.
		j := t.job
		q, err = p.s.prepare(t.ctx, j.Tenant, j.Model, j.Condition, j.Sort, nil)
		if err != nil {
			return nil, err
		}
		at := j.At
		q.At = &at
	}
	if q.Cond != nil && q.Cond.HasFunctions() {
		es, err := p.s.run(t.ctx, q, t.auth)
		if err != nil {
			return nil, err
		}
		ids = make([][16]byte, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		return ids, nil
	}
	return p.s.searcher.SearchIDs(t.ctx, q)
}

// safeText is what a FAILED job records: an API error's own message,
// nothing of an internal one.
func safeText(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code.String() + ": " + e.Message
	}
	return "search failed unexpectedly"
}

// heartbeatLoop stamps the jobs this node holds and claims stale ones, at
// startup and every heartbeat interval.
func (p *pool) heartbeatLoop() {
	defer p.wg.Done()
	iv := p.s.opt.Heartbeat
	if iv <= 0 {
		iv = 15 * time.Second
	}
	tk := time.NewTicker(iv)
	defer tk.Stop()
	p.sweep()
	for {
		select {
		case <-p.stop:
			return
		case <-tk.C:
			p.beat()
			p.sweep()
		}
	}
}

func (p *pool) beat() {
	s := p.s
	p.mu.Lock()
	held := make([]*task, 0, len(p.tasks))
	for _, t := range p.tasks {
		held = append(held, t)
	}
	p.mu.Unlock()
	if len(held) == 0 {
		return
	}
	beats := make([]storage.JobBeat, len(held))
	for i, t := range held {
		beats[i] = storage.JobBeat{Tenant: t.job.Tenant, ID: t.job.ID, Epoch: t.job.Epoch}
	}
	still, err := s.jobs.Heartbeat(context.Background(), beats, s.opt.Now().UTC())
	if err != nil {
		s.opt.OnBackgroundErr("search job heartbeat", err)
		return
	}
	for i, t := range held {
		if !still[i] {
			t.cancel()
		}
	}
}

// sweep claims RUNNING jobs whose executor stopped stamping them: a job
// lost MaxAttempts times is FAILED, otherwise it runs again here.
func (p *pool) sweep() {
	s := p.s
	free := cap(p.queue) - len(p.queue)
	if free > 100 {
		free = 100
	}
	if free <= 0 || s.opt.StaleAfter <= 0 {
		return
	}
	now := s.opt.Now().UTC()
	ctx := context.Background()
	jobs, err := s.jobs.ClaimStale(ctx, now.Add(-s.opt.StaleAfter), now, free)
	if err != nil {
		s.opt.OnBackgroundErr("claiming stale search jobs", err)
		return
	}
	for _, j := range jobs {
		if j.StaleClaims >= s.opt.MaxAttempts {
			j.Status, j.Error, j.FinishedAt = storage.JobFailed, "search abandoned: executor lost repeatedly", now
			if err := s.jobs.Finish(ctx, j, nil); err != nil && !errors.Is(err, storage.ErrConflict) {
				s.opt.OnBackgroundErr("failing stale search job", err)
			}
			continue
		}
		p.mu.Lock()
		p.perTenant[j.Tenant]++
		p.mu.Unlock()
		if !p.enqueue(j, nil, systemAuth) {
			// Left RUNNING: the next sweep claims it again.
			p.release(j.Tenant, [16]byte{})
		}
	}
}

func (p *pool) reapLoop() {
	defer p.wg.Done()
	iv := p.s.opt.ReapInterval
	if iv <= 0 {
		iv = 5 * time.Minute
	}
	tk := time.NewTicker(iv)
	defer tk.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tk.C:
			p.reap()
		}
	}
}

func (p *pool) reap() {
	s := p.s
	if _, err := s.jobs.Reap(context.Background(), s.opt.Now().UTC().Add(-s.opt.SnapshotTTL)); err != nil {
		s.opt.OnBackgroundErr("reaping search snapshots", err)
	}
}

func jobNotFound(id [16]byte) error {
	return apierr.New(apierr.SearchJobNotFound, "search job not found: "+uuid.UUID(id).String())
}

// Status is a job as the status endpoint reports it.
type Status struct {
	Job        *storage.SearchJob
	Expiration time.Time
}

func (s *Service) getJob(ctx context.Context, tenant string, id [16]byte) (*storage.SearchJob, error) {
	j, err := s.jobs.GetJob(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, jobNotFound(id)
	}
	return j, err
}

// JobStatus returns a job with its expiration: finish + TTL once
// finished, create + TTL while running (docs/decisions/0021-search.md).
func (s *Service) JobStatus(ctx context.Context, tenant string, id [16]byte) (*Status, error) {
	j, err := s.getJob(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	exp := j.CreatedAt.Add(s.opt.SnapshotTTL)
	if !j.FinishedAt.IsZero() {
		exp = j.FinishedAt.Add(s.opt.SnapshotTTL)
	}
	return &Status{Job: j, Expiration: exp}, nil
}

// Page is one page of a snapshot.
type Page struct {
	Entities []*storage.Entity
	Number   int
	Size     int
	Total    int64
}

// Results pages a SUCCESSFUL job's snapshot, reading the entities as of
// the job's point in time.
func (s *Service) Results(ctx context.Context, tenant string, id [16]byte, number, size int) (*Page, error) {
	j, err := s.getJob(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if j.Status != storage.JobSuccessful {
		return nil, apierr.New(apierr.BadRequest, "failed to get results: job "+uuid.UUID(id).String()+
			" is not complete (status: "+j.Status+")")
	}
	ids, err := s.jobs.Results(ctx, tenant, id, number*size, size)
	if err != nil {
		return nil, err
	}
	at := j.At
	es, err := s.searcher.Fetch(ctx, tenant, ids, &at)
	if err != nil {
		return nil, err
	}
	return &Page{Entities: es, Number: number, Size: size, Total: j.Count}, nil
}

// Cancel cancels a RUNNING job; a terminal one is 400
// SEARCH_JOB_ALREADY_TERMINAL.
func (s *Service) Cancel(ctx context.Context, tenant string, id [16]byte) error {
	j, err := s.jobs.Cancel(ctx, tenant, id, s.opt.Now().UTC())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return jobNotFound(id)
	case errors.Is(err, storage.ErrConflict) && j != nil:
		sid := uuid.UUID(id).String()
		return apierr.New(apierr.SearchJobAlreadyTerminal, "snapshot by id="+sid+" is not running. current status="+j.Status,
			apierr.P("currentStatus", j.Status), apierr.P("snapshotId", sid))
	case err != nil:
		return err
	}
	p := s.pool
	p.mu.Lock()
	if t := p.tasks[id]; t != nil {
		t.cancel()
	}
	p.mu.Unlock()
	return nil
}
