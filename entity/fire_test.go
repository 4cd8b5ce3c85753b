package entity

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/iam"
	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

// countingTasks counts the task reads the entity service makes.
type countingTasks struct {
	storage.ScheduledTasks
	reads atomic.Int64
}

func (c *countingTasks) EntityTasks(ctx context.Context, tenant string, id [16]byte) ([]storage.ScheduledTask, error) {
	c.reads.Add(1)
	return c.ScheduledTasks.EntityTasks(ctx, tenant, id)
}

type schedFixture struct {
	t     *testing.T
	ctx   context.Context
	now   time.Time
	es    *memory.Entities
	tasks *countingTasks
	msvc  *model.Service
	svc   *Service
	a     Actor
	key   storage.ModelKey
}

const schedWorkflow = `{"allowCycles":true,"workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
  "WAIT":{"transitions":[
    {"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":1000,"timeoutMs":500},
     "criterion":{"type":"simple","jsonPath":"$.ok","operatorType":"EQUALS","value":true}},
    {"name":"leave","next":"GONE","manual":true}]},
  "LOOP":{"transitions":[{"name":"again","next":"LOOP","manual":false,"schedule":{"delayMs":2000}}]},
  "DONE":{"transitions":[{"name":"loop","next":"LOOP","manual":true}]},"GONE":{}}}]}`

func newSchedFixture(t *testing.T, workflows string) *schedFixture {
	f := &schedFixture{t: t, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), a: Actor{Tenant: "A", User: "u1"},
		key: storage.ModelKey{Name: "timed", Version: 1}}
	f.ctx = context.WithValue(context.Background(), iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u1", TenantID: "A"})
	ms := memory.NewModels()
	f.es = memory.NewEntities()
	f.tasks = &countingTasks{ScheduledTasks: f.es.Tasks()}
	f.msvc = model.New(ms, nil)
	if err := ms.PutModel(f.ctx, &storage.Model{Tenant: "A", Key: f.key, State: "LOCKED",
		Schema: []byte(`{"$":{".ok":"BOOLEAN",".n":"INTEGER"}}`)}); err != nil {
		t.Fatal(err)
	}
	if workflows != "" {
		f.importWorkflows(workflows)
	}
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return f.now }}
	f.svc = New(f.es, ms, GateOf(f.msvc), WithWorkflow(NewEngineWorkflow(eng)), WithTasks(f.tasks))
	return f
}

func (f *schedFixture) importWorkflows(body string) {
	f.t.Helper()
	if err := f.msvc.ImportWorkflows(f.ctx, "A", f.key, workflowtest.ParseImport(f.t, body), slog.New(slog.DiscardHandler)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *schedFixture) create(body string) [16]byte {
	f.t.Helper()
	res, err := f.svc.Create(f.ctx, f.a, f.key, "JSON", []byte(body), 100)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Chunks[0].IDs[0]
}

func (f *schedFixture) entity(id [16]byte) *storage.Entity {
	f.t.Helper()
	e, err := f.svc.Get(f.ctx, "A", id, nil, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func (f *schedFixture) only(id [16]byte) storage.ScheduledTask {
	f.t.Helper()
	ts, err := f.es.Tasks().EntityTasks(f.ctx, "A", id)
	if err != nil || len(ts) != 1 {
		f.t.Fatalf("tasks %+v %v", ts, err)
	}
	return ts[0]
}

func (f *schedFixture) none(id [16]byte) {
	f.t.Helper()
	if ts, err := f.es.Tasks().EntityTasks(f.ctx, "A", id); err != nil || len(ts) != 0 {
		f.t.Fatalf("tasks left %+v %v", ts, err)
	}
}

// trail is the entity's audit of one transaction (zero: every one) in
// recording order. Engine events carry the fixture's clock, changes the
// commit instant, so only a transaction's own order is meaningful.
func (f *schedFixture) trail(id, tx [16]byte) []storage.AuditEvent {
	f.t.Helper()
	flt := storage.AuditFilter{}
	if tx != ([16]byte{}) {
		flt.TxID = &tx
	}
	evs, _, err := f.es.Audits().EntityAudit(f.ctx, "A", id, flt, 0, 1000)
	if err != nil {
		f.t.Fatal(err)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
	return evs
}

func ofType(evs []storage.AuditEvent, typ string) []storage.AuditEvent {
	var out []storage.AuditEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func typesOf(evs []storage.AuditEvent) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.Type
	}
	return strings.Join(s, " ")
}

func (f *schedFixture) fire(task storage.ScheduledTask, after time.Duration) FireOutcome {
	f.t.Helper()
	out, err := f.svc.FireTask(context.Background(), task, f.now.Add(after), 200*time.Millisecond)
	if err != nil {
		f.t.Fatalf("fire: %v", err)
	}
	return out
}

// TestFireTaskRules runs the fire steps of docs/decisions/0018-scheduled-transitions.md with an injected clock.
func TestFireTaskRules(t *testing.T) {
	t.Run("arm on create, fire once", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		task := f.only(id)
		if task.SourceState != "WAIT" || task.Transition != "timeout" || !task.ScheduledTime.Equal(f.now.Add(time.Second)) ||
			*task.TimeoutMs != 500 || task.User != "u1" || task.ID != workflow.TaskID("A", uuid.UUID(id).String(), "WAIT", "timeout") {
			t.Fatalf("task %+v", task)
		}
		if got := typesOf(f.trail(id, task.ArmTx)); got != "STATE_MACHINE_START WORKFLOW_FOUND SCHEDULED_TRANSITION_ARM STATE_MACHINE_FINISH CREATE" {
			t.Fatalf("create trail %s", got)
		}
		if out := f.fire(task, 500*time.Millisecond); out != FireLeft {
			t.Fatalf("not yet due: %v", out)
		}
		if out := f.fire(task, 1200*time.Millisecond); out != FireFired {
			t.Fatalf("due: %v", out)
		}
		e := f.entity(id)
		if e.State != "DONE" || e.Transition != "timeout" || e.User != "u1" || e.Version != 2 {
			t.Fatalf("fired entity %+v", e)
		}
		fired := f.trail(id, e.TxID)
		if got := typesOf(fired); got != "TRANSITION_MAKE SCHEDULED_TRANSITION_FIRE UPDATE" {
			t.Fatalf("fire trail %s", got)
		}
		if fired[0].TxID != e.TxID || fired[2].User != "u1" || string(fired[1].Data) != `{"transition":"timeout","sourceState":"WAIT"}` {
			t.Fatalf("fire events %+v", fired)
		}
		f.none(id)
		// The claim the scheduler holds is stale now: nothing happens.
		if out := f.fire(task, 1300*time.Millisecond); out != FireLeft || f.entity(id).Version != 2 {
			t.Fatalf("second fire: %v", out)
		}
	})

	t.Run("lateness: wait within the grace, expire past it", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		task := f.only(id)
		if out := f.fire(task, 1600*time.Millisecond); out != FireLeft {
			t.Fatalf("late within grace: %v", out)
		}
		f.only(id)
		if out := f.fire(task, 1800*time.Millisecond); out != FireExpired {
			t.Fatalf("late past grace: %v", out)
		}
		f.none(id)
		evs := f.trail(id, [16]byte{})
		exp := ofType(evs, "SCHEDULED_TRANSITION_EXPIRE")
		if len(exp) != 1 || exp[0].State != "WAIT" || exp[0].User != "u1" || len(f.trail(id, exp[0].TxID)) != 1 ||
			f.entity(id).State != "WAIT" || strings.Contains(typesOf(evs), "NOT_MATCH") {
			t.Fatalf("expire trail %s", typesOf(evs))
		}
	})

	t.Run("false criterion declines once", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":false}`)
		task := f.only(id)
		if out := f.fire(task, 1100*time.Millisecond); out != FireDeclined {
			t.Fatalf("declined: %v", out)
		}
		f.none(id)
		evs := f.trail(id, [16]byte{})
		if nm := ofType(evs, "TRANSITION_NOT_MATCH_CRITERION"); len(nm) != 1 || len(f.trail(id, nm[0].TxID)) != 1 || f.entity(id).State != "WAIT" {
			t.Fatalf("decline trail %s", typesOf(evs))
		}
		if out := f.fire(task, 2*time.Second); out != FireLeft {
			t.Fatalf("retried: %v", out)
		}
	})

	t.Run("re-armed by a loopback: postponed, stale claim left", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		old := f.only(id)
		f.now = f.now.Add(800 * time.Millisecond)
		upd, err := f.svc.Update(f.ctx, f.a, id, "JSON", []byte(`{"ok":true,"n":1}`), "", "")
		if err != nil {
			t.Fatal(err)
		}
		re := f.only(id)
		if re.ID != old.ID || !re.ScheduledTime.Equal(f.now.Add(time.Second)) || re.ArmTx == old.ArmTx {
			t.Fatalf("re-armed %+v (was %+v)", re, old)
		}
		evs := f.trail(id, upd)
		if got := typesOf(evs); got != "STATE_MACHINE_START WORKFLOW_FOUND SCHEDULED_TRANSITION_ARM STATE_MACHINE_FINISH UPDATE" {
			t.Fatalf("loopback trail %s", got)
		}
		// The old claim, due at the first time, finds the task postponed.
		if out := f.fire(old, 300*time.Millisecond); out != FireLeft || f.entity(id).State != "WAIT" {
			t.Fatalf("stale claim: %v", out)
		}
		if out := f.fire(re, 1100*time.Millisecond); out != FireFired {
			t.Fatalf("postponed fire: %v", out)
		}
	})

	t.Run("leaving the state cancels", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		task := f.only(id)
		leave, err := f.svc.Update(f.ctx, f.a, id, "JSON", []byte(`{"ok":true}`), "leave", "")
		if err != nil {
			t.Fatal(err)
		}
		f.none(id)
		evs := f.trail(id, leave)
		c := evs[len(evs)-3]
		// The event's state is the cancelled task's source state (issue 13
		// item 5); the manual transition records no WORKFLOW_FOUND.
		if c.Type != "SCHEDULED_TRANSITION_CANCEL" || c.State != "WAIT" || string(c.Data) != `{"transition":"timeout","sourceState":"WAIT"}` ||
			typesOf(evs) != "STATE_MACHINE_START TRANSITION_MAKE SCHEDULED_TRANSITION_CANCEL STATE_MACHINE_FINISH UPDATE" {
			t.Fatalf("cancel %+v in %s", c, typesOf(evs))
		}
		if out := f.fire(task, 1100*time.Millisecond); out != FireLeft || f.entity(id).State != "GONE" {
			t.Fatalf("cancelled task fired: %v", out)
		}
	})

	t.Run("firing it by name is TRANSITION_NOT_FOUND", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		_, err := f.svc.Update(f.ctx, f.a, id, "JSON", []byte(`{"ok":true}`), "timeout", "")
		if e := AsAPI(err); e.Code.String() != "TRANSITION_NOT_FOUND" || !strings.Contains(e.Message, "not manually fireable") {
			t.Fatalf("named fire: %v", err)
		}
		f.only(id)
	})

	t.Run("entity deleted or transition removed: dropped", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		gone := f.create(`{"ok":true}`)
		kept := f.create(`{"ok":true}`)
		if _, err := f.svc.Delete(f.ctx, f.a, gone); err != nil {
			t.Fatal(err)
		}
		task := f.only(gone) // delete does not cancel
		if out := f.fire(task, 1100*time.Millisecond); out != FireDropped {
			t.Fatalf("deleted entity: %v", out)
		}
		f.none(gone)
		task = f.only(kept)
		f.importWorkflows(`{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
		  "WAIT":{"transitions":[{"name":"leave","next":"GONE","manual":true}]},"GONE":{}}}]}`)
		if out := f.fire(task, 1100*time.Millisecond); out != FireDropped || f.entity(kept).State != "WAIT" {
			t.Fatalf("removed transition: %v", out)
		}
		f.none(kept)
	})

	t.Run("a scheduled self-loop re-arms itself without CANCEL", func(t *testing.T) {
		f := newSchedFixture(t, schedWorkflow)
		id := f.create(`{"ok":true}`)
		f.fire(f.only(id), 1100*time.Millisecond)
		if _, err := f.svc.Update(f.ctx, f.a, id, "JSON", []byte(`{"ok":true}`), "loop", ""); err != nil {
			t.Fatal(err)
		}
		first := f.only(id)
		if first.SourceState != "LOOP" || first.Transition != "again" {
			t.Fatalf("loop task %+v", first)
		}
		f.now = f.now.Add(5 * time.Second)
		if out := f.fire(first, 0); out != FireFired {
			t.Fatalf("loop fire: %v", out)
		}
		second := f.only(id)
		if second.ID != first.ID || !second.ScheduledTime.Equal(f.now.Add(2*time.Second)) || second.ArmTx == first.ArmTx {
			t.Fatalf("re-armed %+v", second)
		}
		if got := typesOf(f.trail(id, f.entity(id).TxID)); got != "TRANSITION_MAKE SCHEDULED_TRANSITION_ARM SCHEDULED_TRANSITION_FIRE UPDATE" {
			t.Fatalf("loop fire trail %s", got)
		}
	})

	t.Run("workflows without schedules do no task I/O", func(t *testing.T) {
		f := newSchedFixture(t, `{"workflows":[{"version":"1.3","name":"plain","initialState":"A","states":{
		  "A":{"transitions":[{"name":"go","next":"B","manual":true}]},"B":{}}}]}`)
		id := f.create(`{"ok":true}`)
		if _, err := f.svc.Update(f.ctx, f.a, id, "JSON", []byte(`{"ok":false}`), "go", ""); err != nil {
			t.Fatal(err)
		}
		if n := f.tasks.reads.Load(); n != 0 {
			t.Fatalf("%d task reads", n)
		}
		f.none(id)
		if strings.Contains(typesOf(f.trail(id, [16]byte{})), "SCHEDULED") {
			t.Fatal("schedule events without schedules")
		}
	})

	t.Run("a fire that fails is left for a retry", func(t *testing.T) {
		f := newSchedFixture(t, `{"workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
		  "WAIT":{"transitions":[{"name":"t","next":"DONE","manual":false,"schedule":{"delayMs":10},
		    "processors":[{"name":"nowhere","executionMode":"SYNC","config":{"calculationNodesTags":"none"}}]}]},"DONE":{}}}]}`)
		id := f.create(`{}`)
		_, err := f.svc.FireTask(context.Background(), f.only(id), f.now.Add(time.Second), 0)
		if e := AsAPI(err); e.Code != apierr.NoComputeMemberForTag {
			t.Fatalf("fire error %v", err)
		}
		f.only(id)
		if f.entity(id).State != "WAIT" {
			t.Fatal("moved")
		}
		if errors.Is(err, storage.ErrConflict) {
			t.Fatal("conflict")
		}
	})
}

// TestCollectionUpdateTwiceReconciles: a collection update that moves one
// entity twice in a transaction arms only the final state's task; the
// middle state's task, armed earlier in the same transaction, is
// cancelled too.
func TestCollectionUpdateTwiceReconciles(t *testing.T) {
	f := newSchedFixture(t, `{"workflows":[{"version":"1.3","name":"steps","initialState":"S1","states":{
	  "S1":{"transitions":[{"name":"a","next":"END","manual":false,"schedule":{"delayMs":1000}},{"name":"next","next":"S2","manual":true}]},
	  "S2":{"transitions":[{"name":"b","next":"END","manual":false,"schedule":{"delayMs":1000}},{"name":"next2","next":"S3","manual":true}]},
	  "S3":{"transitions":[{"name":"c","next":"END","manual":false,"schedule":{"delayMs":1000}}]},"END":{}}}]}`)
	id := f.create(`{"n":1}`)
	if task := f.only(id); task.Transition != "a" {
		t.Fatalf("task %+v", task)
	}
	sid := uuid.UUID(id).String()
	p2, p3 := `{"n":2}`, `{"n":3}`
	res, err := f.svc.UpdateCollection(f.ctx, f.a, []UpdateItem{{ID: &sid, Payload: &p2, Transition: "next"}, {ID: &sid, Payload: &p3, Transition: "next2"}}, 100)
	if err != nil || res.Err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	if task := f.only(id); task.Transition != "c" || task.SourceState != "S3" {
		t.Fatalf("task after two moves %+v", task)
	}
	var cancelled []string
	for _, e := range ofType(f.trail(id, res.Chunks[0].TxID), "SCHEDULED_TRANSITION_CANCEL") {
		cancelled = append(cancelled, string(e.Data))
	}
	if strings.Join(cancelled, " ") != `{"transition":"a","sourceState":"S1"} {"transition":"b","sourceState":"S2"}` {
		t.Fatalf("cancelled %v", cancelled)
	}
}
