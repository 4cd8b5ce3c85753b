package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svc/entity"
	"svc/iam"
	"svc/internal/await"
	"svc/model"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres"
	"svc/storage/sqlite/sqlitetest"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

var testDBURL string

func TestMain(m *testing.M) { pgtest.Main(m, "scheduler", &testDBURL) }

// world is an entity service over one engine whose scheduled transition
// runs a processor that counts its calls per entity.
type world struct {
	svc   *entity.Service
	tasks storage.ScheduledTasks
	ents  storage.Entities
	*counter
}

// counter counts processor calls per entity across every world of a test,
// so a task fired by two schedulers shows up as two calls.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) fired() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func newWorld(t *testing.T, engine string, c *counter) *world {
	t.Helper()
	ctx := context.Background()
	var ms storage.Models
	w := &world{counter: c}
	if engine == "postgres" {
		db, err := postgres.Open(ctx, postgres.Options{URL: testDBURL, MaxConns: 16, AcquireTimeout: 5 * time.Second,
			StatementTimeout: time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		ms, w.ents, w.tasks = db.Models(), db.Entities(), db.Tasks()
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, w.ents, w.tasks = db.Models(), db.Entities(), db.Tasks()
	} else {
		m := memory.NewEntities()
		ms, w.ents, w.tasks = memory.NewModels(), m, m.Tasks()
	}
	// Each test gets its own model so a shared database does not mix runs.
	key := storage.ModelKey{Name: "sched" + time.Now().Format("150405.000000000"), Version: 1}
	if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED", Schema: []byte(`{"$":{".n":"INTEGER"}}`)}); err != nil {
		t.Fatal(err)
	}
	msvc := model.New(ms, nil)
	if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(t, `{"workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
	  "WAIT":{"transitions":[{"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":50},
	    "processors":[{"name":"count","executionMode":"SYNC"}]}]},"DONE":{}}}]}`), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	d := workflow.NewLocalDispatcher()
	d.Processor("count", func(_ context.Context, c *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
		w.mu.Lock()
		w.calls[c.Meta.ID]++
		w.mu.Unlock()
		if c.Auth.Kind != "system" || c.Auth.ID != "system" {
			t.Errorf("processor ran as %+v", c.Auth)
		}
		return &workflow.ProcessorResult{Success: true}, nil
	})
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: d, Log: slog.New(slog.DiscardHandler)}
	w.svc = entity.New(w.ents, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)), entity.WithTasks(w.tasks))
	uctx := context.WithValue(ctx, iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u1", TenantID: "A"})
	body := []byte(`[` + repeat(`{"n":1}`, 40) + `]`)
	if _, err := w.svc.Create(uctx, entity.Actor{Tenant: "A", User: "u1"}, key, "JSON", body, 7); err != nil {
		t.Fatal(err)
	}
	return w
}

func repeat(s string, n int) string {
	out := s
	for i := 1; i < n; i++ {
		out += "," + s
	}
	return out
}

// TestFiresOnceWithTwoSchedulers runs two schedulers over one store (on
// PostgreSQL: two pools, as two nodes would): every task fires exactly
// once, its processor called once.
func TestFiresOnceWithTwoSchedulers(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			c := &counter{calls: map[string]int{}}
			w, want := newWorld(t, engine, c), 40
			second := w
			if engine == "postgres" {
				second, want = newWorld(t, engine, c), 80 // another pool and service on the same database
			}
			log := slog.New(slog.DiscardHandler)
			o := Options{ScanInterval: 10 * time.Millisecond, BatchSize: 5, RedispatchBackoff: 30 * time.Second, Log: log}
			a, b := New(w.tasks, w.svc, o), New(second.tasks, second.svc, o)
			a.Start()
			b.Start()
			await.Value(t, 30*time.Second, func() (int, bool) { n := c.fired(); return n, n >= want }, "%d tasks fired", want)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			for id, n := range c.calls {
				if n != 1 {
					t.Fatalf("entity %s: processor called %d times", id, n)
				}
			}
			if left, err := w.tasks.ClaimDue(context.Background(), time.Now().Add(time.Hour), time.Now().Add(time.Hour), 1000); err != nil || len(left) != 0 {
				t.Fatalf("tasks left %d %v", len(left), err)
			}
		})
	}
}

// TestStopWaitsForFires: Stop returns only after the fires it started have
// finished, and a second Stop is a no-op.
func TestStopWaitsForFires(t *testing.T) {
	release := make(chan struct{})
	f := &blockingFirer{started: make(chan struct{}, 1), release: release}
	ts := &oneTask{}
	s := New(ts, f, Options{ScanInterval: 5 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	s.Start()
	<-f.started
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background()) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned with a fire in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Stop that gives up cancels the fire's context.
	f2 := &blockingFirer{started: make(chan struct{}, 1), release: make(chan struct{})}
	s2 := New(&oneTask{}, f2, Options{ScanInterval: 5 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	s2.Start()
	<-f2.started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s2.Stop(ctx); err == nil {
		t.Fatal("Stop did not report giving up")
	}
}

type blockingFirer struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingFirer) FireTask(ctx context.Context, _ storage.ScheduledTask, _ time.Time, _ time.Duration) (entity.FireOutcome, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return entity.FireLeft, ctx.Err()
	}
	return entity.FireFired, nil
}

// oneTask hands out a single due task once.
type oneTask struct {
	storage.ScheduledTasks
	mu   sync.Mutex
	done bool
}

func (o *oneTask) ClaimDue(context.Context, time.Time, time.Time, int) ([]storage.ScheduledTask, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil, nil
	}
	o.done = true
	return []storage.ScheduledTask{{Tenant: "A", ID: "x"}}, nil
}

// TestScanBoundsInflightFires: while BatchSize fires are still running, a
// scan claims nothing more; once they finish it claims again.
func TestScanBoundsInflightFires(t *testing.T) {
	release := make(chan struct{})
	f := &blockingFirer{started: make(chan struct{}, 8), release: release}
	ts := &manyTasks{}
	s := New(ts, f, Options{BatchSize: 3, Log: slog.New(slog.DiscardHandler)})
	if n, err := s.Scan(context.Background()); err != nil || n != 3 {
		t.Fatalf("first scan %d %v", n, err)
	}
	for i := 0; i < 3; i++ {
		<-f.started
	}
	if n, _ := s.Scan(context.Background()); n != 0 {
		t.Fatalf("claimed %d with the batch still firing", n)
	}
	close(release)
	s.Wait()
	if n, _ := s.Scan(context.Background()); n != 3 {
		t.Fatalf("claimed %d after the fires ended", n)
	}
	s.Wait()
	if ts.asked[1] != 3 || len(ts.asked) != 2 {
		t.Fatalf("limits asked %v", ts.asked)
	}
}

// manyTasks always has due tasks and records the limits it was asked for.
type manyTasks struct {
	storage.ScheduledTasks
	mu    sync.Mutex
	asked []int
}

func (m *manyTasks) ClaimDue(_ context.Context, _, _ time.Time, limit int) ([]storage.ScheduledTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, limit)
	out := make([]storage.ScheduledTask, limit)
	for i := range out {
		out[i] = storage.ScheduledTask{Tenant: "A", ID: "t"}
	}
	return out, nil
}

// countingFirer counts the fires that reach one node's scheduler.
type countingFirer struct {
	Firer
	n atomic.Int64
}

func (c *countingFirer) FireTask(ctx context.Context, t storage.ScheduledTask, now time.Time, grace time.Duration) (entity.FireOutcome, error) {
	c.n.Add(1)
	return c.Firer.FireTask(ctx, t, now, grace)
}

// TestCoordinatorHandsOffRoundRobin: of three schedulers over one store
// only the coordinator scans, it hands the claimed tasks round-robin to
// all three (itself included), and every task fires exactly once.
func TestCoordinatorHandsOffRoundRobin(t *testing.T) {
	c := &counter{calls: map[string]int{}}
	w := newWorld(t, "memory", c)
	log := slog.New(slog.DiscardHandler)
	var nodes [3]*Scheduler
	var firers [3]*countingFirer
	var next atomic.Int64
	scans := [3]atomic.Int64{}
	for i := range nodes {
		firers[i] = &countingFirer{Firer: w.svc}
		o := Options{ScanInterval: 10 * time.Millisecond, BatchSize: 5, RedispatchBackoff: 30 * time.Second, Log: log,
			Coordinator: func() bool { scans[i].Add(1); return i == 0 },
			Handoff: func(task storage.ScheduledTask) bool {
				to := int(next.Add(1)) % len(nodes)
				if to == i {
					return false
				}
				nodes[to].FireClaimed(task)
				return true
			}}
		nodes[i] = New(w.tasks, firers[i], o)
	}
	for _, n := range nodes {
		n.Start()
	}
	await.Value(t, 60*time.Second, func() (int, bool) { n := c.fired(); return n, n >= 40 }, "40 tasks fired")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range nodes {
		if err := n.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for id, n := range c.calls {
		if n != 1 {
			t.Fatalf("entity %s: processor called %d times", id, n)
		}
	}
	for i, f := range firers {
		if f.n.Load() == 0 {
			t.Errorf("node %d fired nothing: the handoff is not round-robin", i)
		}
		if scans[i].Load() == 0 {
			t.Errorf("node %d never asked whether it coordinates", i)
		}
	}
	// A stopped scheduler drops a handoff instead of firing it.
	before := firers[1].n.Load()
	nodes[1].FireClaimed(storage.ScheduledTask{Tenant: "A", ID: "gone"})
	nodes[1].Wait()
	if firers[1].n.Load() != before {
		t.Fatal("a stopped scheduler fired a handed-off task")
	}
}
