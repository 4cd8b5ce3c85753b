package fast

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/audit"
	"svc/entity"
	"svc/internal/await"
	"svc/model"
	"svc/platform/config"
	"svc/scheduler"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
	"svc/workflow"
)

// newScheduledEnv is the audit environment plus scheduled tasks and a
// running scheduler scanning every 50 ms, as cmd/svc serve wires them.
func newScheduledEnv(t testing.TB, engine string) *entityEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var as storage.Audits
	var ts storage.ScheduledTasks
	var sr storage.Searcher
	if engine == "postgres" {
		db := newEntityPostgres(t)
		ms, es, as, ts, sr = db.Models(), db.Entities(), db.Audits(), db.Tasks(), db.Search(time.Minute)
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, es, as, ts, sr = db.Models(), db.Entities(), db.Audits(), db.Tasks(), db.Search()
	} else {
		m := memory.NewEntities()
		ms, es, as, ts, sr = memory.NewModels(), m, m.Audits(), m.Tasks(), memory.NewSearch(m)
	}
	msvc := model.New(ms, nil)
	log := slog.New(slog.DiscardHandler)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: log}
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)), entity.WithTasks(ts),
		entity.WithConditions(search.New(ms, sr, memory.NewSearchJobs(), search.Options{})))
	msvc.SetEntityCounter(esvc)
	skew := new(atomic.Int64)
	sched := scheduler.New(ts, esvc, scheduler.Options{ScanInterval: 50 * time.Millisecond, BatchSize: 100,
		RedispatchBackoff: time.Second, ExpiryGrace: 100 * time.Millisecond, Log: log,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	sched.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sched.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Audit: audit.New(as, es)})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc, sched: sched, schedSkew: skew}
}

// scanAhead moves the scheduler's clock d ahead of time.Now for the rest
// of the subtest, then waits until two scans have finished (so a whole
// scan read the moved clock) and for the fires they started. Whatever is
// due by time.Now()+d has fired when it returns: a test sees that
// something does not fire without sleeping past its time.
func (e *entityEnv) scanAhead(t *testing.T, d time.Duration) {
	t.Helper()
	e.schedSkew.Store(int64(d))
	t.Cleanup(func() { e.schedSkew.Store(0) })
	n := e.sched.Scans()
	await.Until(t, await.Long, func() bool { return e.sched.Scans() >= n+2 }, "two scans on the moved clock")
	e.sched.Wait()
}

// timerWorkflow waits in WAIT until "timeout" fires after delayMs, guarded
// by $.ok; "leave" moves on by hand.
func timerWorkflow(delayMs int) string {
	return `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
	  "WAIT":{"transitions":[
	    {"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":` + strconv.Itoa(delayMs) + `},
	     "criterion":{"type":"simple","jsonPath":"$.ok","operatorType":"EQUALS","value":true}},
	    {"name":"leave","next":"GONE","manual":true}]},
	  "DONE":{},"GONE":{}}}]}`
}

// trailOf is the entity's audit, newest first.
func (e *entityEnv) trailOf(tenant, id string) auditPage {
	e.t.Helper()
	var p auditPage
	e.call(tenant, "GET", "/audit/entity/"+id+"?pageSize=1000", nil).ok(e.t).decode(e.t, &p)
	return p
}

func itemsOf(p auditPage, typ string) []auditItem {
	var out []auditItem
	for _, it := range p.Items {
		if it.kind() == typ {
			out = append(out, it)
		}
	}
	return out
}

// TestScheduledTransitionsHTTP is behaviour 30 over real HTTP with a
// running scheduler, on every engine.
func TestScheduledTransitionsHTTP(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newScheduledEnv(t, engine)
			env.lockedModel("A", "timed", 1, `{"ok":true,"n":1}`)
			if r := env.call("A", "POST", "/model/timed/1/workflow/import", []byte(timerWorkflow(300))); r.status != 200 {
				t.Fatalf("import: %d %s", r.status, r.body)
			}
			t.Run("fires after the delay", func(t *testing.T) { scheduledFires(t, env) })
			t.Run("loopback postpones", func(t *testing.T) { scheduledPostponed(t, env) })
			t.Run("leaving cancels", func(t *testing.T) { scheduledCancelled(t, env) })
			t.Run("false criterion declines once", func(t *testing.T) { scheduledDeclined(t, env) })
			t.Run("not fireable by name", func(t *testing.T) {
				env := env.with(t)
				id, _ := env.create("A", "timed", 1, `{"ok":true,"n":1}`)
				env.call("A", "PUT", "/entity/JSON/"+id+"/timeout", []byte(`{"ok":true,"n":2}`)).problem(t, 400, "TRANSITION_NOT_FOUND")
				if st := env.get("A", "/entity/"+id).Meta.State; st != "WAIT" {
					t.Fatalf("state %s", st)
				}
			})
		})
	}
}

func scheduledFires(t *testing.T, env *entityEnv) {
	env = env.with(t)
	id, tx := env.create("A", "timed", 1, `{"ok":true,"n":1}`)
	await.Until(t, await.Long, func() bool { return env.get("A", "/entity/"+id).Meta.State == "DONE" }, "the scheduled fire")
	got := env.get("A", "/entity/"+id)
	if got.Meta.Transition == nil || *got.Meta.Transition != "timeout" || got.Meta.TransactionID == tx {
		t.Fatalf("fired meta %+v", got.Meta)
	}
	p := env.trailOf("A", id)
	// Newest first: the fire's transaction, then the create's.
	want := "UPDATE SCHEDULED_TRANSITION_FIRE TRANSITION_MAKE CREATE STATE_MACHINE_FINISH SCHEDULED_TRANSITION_ARM WORKFLOW_FOUND STATE_MACHINE_START"
	if k := kinds(p); k != want {
		t.Fatalf("trail:\n got %s\nwant %s", k, want)
	}
	arm := itemsOf(p, "SCHEDULED_TRANSITION_ARM")[0]
	// scheduledTime is the task's scheduled time (docs/decisions/0018-scheduled-transitions.md): Unix
	// milliseconds, a JSON number.
	var data struct {
		Transition    string `json:"transition"`
		SourceState   string `json:"sourceState"`
		ScheduledTime int64  `json:"scheduledTime"`
	}
	if err := json.Unmarshal(arm.Data, &data); err != nil || data.Transition != "timeout" || data.SourceState != "WAIT" || arm.TransactionID != tx ||
		arm.State == nil || *arm.State != "WAIT" {
		t.Fatalf("ARM %+v %s (%v)", arm, arm.Data, err)
	}
	armed, _ := time.Parse(time.RFC3339Nano, arm.UTCTime)
	at := time.UnixMilli(data.ScheduledTime)
	if d := at.Sub(armed); d < 199*time.Millisecond || d > 30*time.Second {
		t.Fatalf("scheduledTime %v for an arm at %v with delayMs 200", at, armed)
	}
	fire := itemsOf(p, "SCHEDULED_TRANSITION_FIRE")[0]
	firedAt, _ := time.Parse(time.RFC3339Nano, fire.UTCTime)
	if firedAt.Before(at) || fire.TransactionID != got.Meta.TransactionID {
		t.Fatalf("fired at %v before its time %v, or in %s", firedAt, at, fire.TransactionID)
	}
	// The write is the arming user's, executed by the system principal
	// (docs/decisions/0018-scheduled-transitions.md); the create is the user's own.
	if up := itemsOf(p, "UPDATE")[0]; up.Actor == nil || up.Actor.ID != "u-A" {
		t.Fatalf("fire attributed to %+v", up.Actor)
	}
	var changes []map[string]any
	env.call("A", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
	if len(changes) != 2 || changes[0]["user"] != "u-A" || changes[0]["attributedKind"] != "user" || fmt.Sprint(changes[0]["executedBy"]) != "map[id:system kind:system]" ||
		changes[1]["attributedKind"] != "user" || fmt.Sprint(changes[1]["executedBy"]) != "map[id:u-A kind:user]" {
		t.Fatalf("changes of a fired entity: %v", changes)
	}
}

func scheduledPostponed(t *testing.T, env *entityEnv) {
	env = env.with(t)
	id, _ := env.create("A", "timed", 1, `{"ok":true,"n":1}`)
	// scheduledTime has millisecond resolution: re-arm visibly later.
	time.Sleep(5 * time.Millisecond)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"ok":true,"n":2}`)).ok(t).decode(t, &r)
	await.Until(t, await.Long, func() bool { return env.get("A", "/entity/"+id).Meta.State == "DONE" }, "the postponed fire")
	p := env.trailOf("A", id)
	arms := itemsOf(p, "SCHEDULED_TRANSITION_ARM")
	if len(arms) != 2 || arms[0].TransactionID != r.TransactionID || len(itemsOf(p, "SCHEDULED_TRANSITION_CANCEL")) != 0 {
		t.Fatalf("trail %s", kinds(p))
	}
	var first, second struct {
		ScheduledTime int64 `json:"scheduledTime"`
	}
	_ = json.Unmarshal(arms[1].Data, &first)
	_ = json.Unmarshal(arms[0].Data, &second)
	fire := itemsOf(p, "SCHEDULED_TRANSITION_FIRE")
	firedAt, _ := time.Parse(time.RFC3339Nano, fire[0].UTCTime)
	if len(fire) != 1 || second.ScheduledTime <= first.ScheduledTime || firedAt.Before(time.UnixMilli(second.ScheduledTime)) {
		t.Fatalf("re-armed %v → %v, fired at %v (%d fires)", first.ScheduledTime, second.ScheduledTime, firedAt, len(fire))
	}
}

func scheduledCancelled(t *testing.T, env *entityEnv) {
	env = env.with(t)
	id, _ := env.create("A", "timed", 1, `{"ok":true,"n":1}`)
	var r txResult
	env.call("A", "PUT", "/entity/JSON/"+id+"/leave", []byte(`{"ok":true,"n":1}`)).ok(t).decode(t, &r)
	p := env.trailOf("A", id)
	c := itemsOf(p, "SCHEDULED_TRANSITION_CANCEL")
	var data map[string]string
	if len(c) == 1 {
		_ = json.Unmarshal(c[0].Data, &data)
	}
	// The CANCEL's state is the cancelled task's source state, the one the
	// entity left; the manual transition records no WORKFLOW_FOUND.
	if len(c) != 1 || c[0].TransactionID != r.TransactionID || len(data) != 2 || data["transition"] != "timeout" || data["sourceState"] != "WAIT" ||
		c[0].State == nil || *c[0].State != "WAIT" {
		t.Fatalf("cancel in %s: %+v", kinds(p), c)
	}
	var leave auditPage
	env.call("A", "GET", "/audit/entity/"+id+"?transactionId="+r.TransactionID, nil).ok(t).decode(t, &leave)
	if k := kinds(leave); k != "UPDATE STATE_MACHINE_FINISH SCHEDULED_TRANSITION_CANCEL TRANSITION_MAKE STATE_MACHINE_START" {
		t.Fatalf("manual transition trail: %s", k)
	}
	// Well past the delay (the scheduler's clock moved 600 ms ahead, two
	// scans done) the entity has not moved.
	env.scanAhead(t, 600*time.Millisecond)
	if st := env.get("A", "/entity/"+id).Meta.State; st != "GONE" || len(itemsOf(env.trailOf("A", id), "SCHEDULED_TRANSITION_FIRE")) != 0 {
		t.Fatalf("state %s after cancel", st)
	}
}

func scheduledDeclined(t *testing.T, env *entityEnv) {
	env = env.with(t)
	id, _ := env.create("A", "timed", 1, `{"ok":false,"n":1}`)
	await.Until(t, await.Long, func() bool {
		return len(itemsOf(env.trailOf("A", id), "TRANSITION_NOT_MATCH_CRITERION")) > 0
	}, "the declined fire")
	// Well past the redispatch backoff (1 s here; the scheduler's clock
	// moved 1.5 s ahead, two scans done): no retry.
	env.scanAhead(t, 1500*time.Millisecond)
	p := env.trailOf("A", id)
	if n := len(itemsOf(p, "TRANSITION_NOT_MATCH_CRITERION")); n != 1 || env.get("A", "/entity/"+id).Meta.State != "WAIT" {
		t.Fatalf("%d declines, trail %s", n, kinds(p))
	}
}
