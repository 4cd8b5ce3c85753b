// Package scheduler is the scan loop of scheduled transitions
// (docs/decisions/0018-scheduled-transitions.md): every scan interval it claims the due tasks,
// oldest first, and fires each on its own goroutine as the system
// principal. The claim (RedispatchAfter = now + backoff) is what keeps a
// task from firing twice: a concurrent scanner, on this node or another
// on the same database, cannot claim it again before the backoff passes,
// and the fire's CAS on the entity version and on the task's arming
// rejects a stale second attempt after that.
package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"svc/entity"
	"svc/storage"
)

// Firer fires one claimed task; *entity.Service implements it.
type Firer interface {
	FireTask(ctx context.Context, t storage.ScheduledTask, now time.Time, grace time.Duration) (entity.FireOutcome, error)
}

// Options are the SVC_SCHEDULER_* settings.
type Options struct {
	// ScanInterval is SVC_SCHEDULER_SCAN_INTERVAL (default 1 s).
	ScanInterval time.Duration
	// BatchSize is SVC_SCHEDULER_BATCH_SIZE (default 100).
	BatchSize int
	// RedispatchBackoff is SVC_SCHEDULER_REDISPATCH_BACKOFF (default 30 s).
	RedispatchBackoff time.Duration
	// ExpiryGrace is SVC_SCHEDULER_EXPIRY_GRACE (default 100 ms).
	ExpiryGrace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
	// Coordinator reports whether this node scans now
	// (SVC_SCHEDULER_COORDINATOR: the live node with the smallest id);
	// nil means always, as on a single node.
	Coordinator func() bool
	// Handoff gives a claimed task to the node that fires it
	// (SVC_SCHEDULER_DISTRIBUTION round-robin) and reports whether it
	// did; false fires it here. The receiving node calls FireClaimed. A
	// handoff that is lost leaves the claim to pass, and the task is
	// claimed and handed off again after the redispatch backoff. Nil
	// fires everything here.
	Handoff func(t storage.ScheduledTask) bool
}

// Scheduler owns the scan goroutine and the fire goroutines it starts.
type Scheduler struct {
	tasks storage.ScheduledTasks
	firer Firer
	o     Options

	mu      sync.Mutex
	cancel  context.CancelFunc // stops the scan loop
	fireCtx context.Context    // fires run under it; cancelled when Stop gives up waiting
	stopAll context.CancelFunc
	loop    sync.WaitGroup
	fires   sync.WaitGroup
	// inflight counts running fires; a scan claims only what brings them
	// back up to BatchSize, so slow fires (a processor waiting out its
	// timeout) cannot pile up goroutines scan after scan.
	inflight atomic.Int64
	// scans counts finished scans (Scans).
	scans atomic.Uint64
}

// New returns a stopped scheduler over tasks firing through f.
func New(tasks storage.ScheduledTasks, f Firer, o Options) *Scheduler {
	if o.ScanInterval <= 0 {
		o.ScanInterval = time.Second
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	if o.RedispatchBackoff <= 0 {
		o.RedispatchBackoff = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Scheduler{tasks: tasks, firer: f, o: o}
}

// Start begins scanning every ScanInterval until Stop. Starting a running
// scheduler does nothing.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.fireCtx, s.stopAll = context.WithCancel(context.Background())
	s.cancel = cancel
	s.loop.Add(1)
	go s.run(ctx)
}

// Stop ends the scan loop and waits for the fires in flight until ctx is
// done; then it cancels them (their transactions roll back and the tasks
// stay for the next start, after their claim passes).
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel, stopAll := s.cancel, s.stopAll
	s.cancel = nil
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	s.loop.Wait()
	done := make(chan struct{})
	go func() {
		s.fires.Wait()
		close(done)
	}()
	select {
	case <-done:
		stopAll()
		return nil
	case <-ctx.Done():
		stopAll()
		<-done
		return ctx.Err()
	}
}

func (s *Scheduler) run(ctx context.Context) {
	defer s.loop.Done()
	tick := time.NewTicker(s.o.ScanInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := s.Scan(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.o.Log.Warn("scheduled transitions: scan failed", "error", err)
		}
	}
}

// Scan claims up to BatchSize due tasks (less the fires still running)
// and starts a fire for each; it returns how many it claimed without
// waiting for the fires (Wait does).
func (s *Scheduler) Scan(ctx context.Context) (int, error) {
	defer s.scans.Add(1)
	if s.o.Coordinator != nil && !s.o.Coordinator() {
		return 0, nil
	}
	room := s.o.BatchSize - int(s.inflight.Load())
	if room <= 0 {
		return 0, nil
	}
	now := s.o.Now()
	claimed, err := s.tasks.ClaimDue(ctx, now, now.Add(s.o.RedispatchBackoff), room)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	fireCtx := s.fireCtx
	s.mu.Unlock()
	if fireCtx == nil {
		fireCtx = context.Background()
	}
	for _, t := range claimed {
		if s.o.Handoff != nil && s.o.Handoff(t) {
			continue
		}
		s.fires.Add(1)
		s.inflight.Add(1)
		go s.fire(fireCtx, t)
	}
	return len(claimed), nil
}

// Scans reports how many scans have finished, whatever they claimed. A
// scan counted here has started the fires of everything it claimed, so
// once the count has grown by two since a moment, a whole scan read the
// clock after that moment and Wait covers its fires: tests see that
// nothing is due by waiting on scans with an injected clock instead of
// sleeping.
func (s *Scheduler) Scans() uint64 { return s.scans.Load() }

// FireClaimed fires a task another node claimed and handed to this one.
// The fire re-reads the task and its entity, so a stale or repeated
// handoff changes nothing. It returns at once; a stopped scheduler drops
// the task (its claim passes and the coordinator hands it off again).
func (s *Scheduler) FireClaimed(t storage.ScheduledTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return
	}
	s.fires.Add(1)
	s.inflight.Add(1)
	go s.fire(s.fireCtx, t)
}

// Wait blocks until the fires started so far have finished.
func (s *Scheduler) Wait() { s.fires.Wait() }

func (s *Scheduler) fire(ctx context.Context, t storage.ScheduledTask) {
	defer s.fires.Done()
	defer s.inflight.Add(-1)
	out, err := s.firer.FireTask(ctx, t, s.o.Now(), s.o.ExpiryGrace)
	if err != nil {
		s.o.Log.Warn("scheduled transition: fire failed; retried after the redispatch backoff",
			"tenant", t.Tenant, "task", t.ID, "transition", t.Transition, "sourceState", t.SourceState, "error", err)
		return
	}
	s.o.Log.Debug("scheduled transition", "outcome", out.String(), "tenant", t.Tenant, "task", t.ID, "transition", t.Transition)
}
