package entity

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/workflow"
)

// WithTasks enables scheduled transitions: settled writes arm the
// scheduled transitions of their state and cancel other states' tasks in
// their own transaction (docs/decisions/0018-scheduled-transitions.md), and FireTask fires due
// ones. Without it schedules are parsed but never armed.
func WithTasks(t storage.ScheduledTasks) Option { return func(s *Service) { s.tasks = t } }

// armPlan is what a settled write arms: the engine's fire times for the
// scheduled transitions of the settled state. Nil when the model's
// workflows declare no schedule, so such writes do no task I/O.
type armPlan struct {
	state string
	plans []workflow.PlannedArm
	at    time.Time
	// entityID and txID are the run's, as its events name them.
	entityID, txID string
}

// withArms resolves the fire times of out's scheduled transitions into
// st when the set declares any schedule and the entity is identified.
func (w *EngineWorkflow) withArms(ctx context.Context, set *workflow.Set, r *workflow.Run, out *workflow.Outcome, st *settled) error {
	if r.Entity.Meta.ID == "" || !set.HasSchedules() {
		return nil
	}
	plans, err := w.Engine.Arm(ctx, r, out)
	if err != nil {
		return err
	}
	at := time.Now()
	if n := len(out.Events); n > 0 {
		at = out.Events[n-1].Time
	}
	st.arms = &armPlan{state: out.State, plans: plans, at: at, entityID: r.Entity.Meta.ID, txID: r.TransactionID}
	return nil
}

// reconcile turns st's arm plan into task changes and their audit events
// (inserted before the run's closing FINISH or FIRE event): arm each
// scheduled transition of the settled state, expire those born expired,
// cancel the entity's tasks of other states. fresh skips reading existing
// tasks (a new entity has none); pending are the task changes of the
// transaction so far (a collection update may revise an entity twice).
// fired, when set, is the task a scheduled fire consumes: its delete is
// the caller's and its CANCEL is not recorded.
func (s *Service) reconcile(ctx context.Context, tenant string, id, txID [16]byte, st *settled, fresh bool, pending []storage.TaskOp, fired string) ([]storage.TaskOp, error) {
	p := st.arms
	if p == nil || s.tasks == nil {
		return nil, nil
	}
	var existing []storage.ScheduledTask
	if !fresh {
		var err error
		if existing, err = s.tasks.EntityTasks(ctx, tenant, id); err != nil {
			return nil, fmt.Errorf("reading scheduled tasks: %w", err)
		}
		existing = overlayTasks(existing, pending, id)
	}
	eid, tid := p.entityID, p.txID
	if eid == "" {
		eid = uuid.UUID(id).String()
	}
	if tid == "" {
		tid = uuid.UUID(txID).String()
	}
	ops := make([]storage.TaskOp, 0, len(p.plans)+len(existing))
	var evBuf [4]workflow.Event // most states arm a few: no allocation
	evs := evBuf[:0]
	for _, ex := range existing {
		if ex.SourceState == p.state {
			continue
		}
		if ex.ID == fired {
			continue
		}
		ops = append(ops, storage.TaskOp{Delete: true, Task: storage.ScheduledTask{ID: ex.ID, EntityID: id}})
		// The event is about the task: its state is the one the entity left.
		evs = append(evs, workflow.ScheduledEvent(workflow.EventScheduledTransitionCancel, eid, ex.SourceState, tid, ex.Transition, ex.SourceState, time.Time{}, p.at))
	}
	for _, pl := range p.plans {
		tk := workflow.TaskID(tenant, eid, p.state, pl.Transition)
		if pl.Arming.BornExpired {
			ops = append(ops, storage.TaskOp{Delete: true, Task: storage.ScheduledTask{ID: tk, EntityID: id}})
			evs = append(evs, workflow.ScheduledEvent(workflow.EventScheduledTransitionExpire, eid, p.state, tid, pl.Transition, p.state, time.Time{}, p.at))
			continue
		}
		ops = append(ops, storage.TaskOp{Task: storage.ScheduledTask{ID: tk, EntityID: id, SourceState: p.state, Transition: pl.Transition,
			ScheduledTime: pl.Arming.FireAt, TimeoutMs: pl.Arming.TimeoutMs}})
		evs = append(evs, workflow.ScheduledEvent(workflow.EventScheduledTransitionArm, eid, p.state, tid, pl.Transition, p.state, pl.Arming.FireAt, p.at))
	}
	if len(evs) > 0 && st.Events != nil {
		st.Events = insertBeforeLast(st.Events, evs, id)
	}
	return ops, nil
}

// insertBeforeLast puts evs (about entity id) before the run's closing
// event (FINISH, or FIRE on the scheduled path), else at the end, in one
// allocation.
func insertBeforeLast(run []storage.AuditEvent, evs []workflow.Event, id [16]byte) []storage.AuditEvent {
	n := len(run)
	closing := n > 0 && (run[n-1].Type == workflow.EventStateMachineFinish || run[n-1].Type == workflow.EventScheduledTransitionFire)
	out := make([]storage.AuditEvent, 0, n+len(evs))
	if closing {
		out = append(out, run[:n-1]...)
	} else {
		out = append(out, run...)
	}
	for i := range evs {
		e := &evs[i]
		out = append(out, storage.AuditEvent{EntityID: id, Time: e.Time, Kind: storage.AuditStateMachine, Type: e.Type,
			State: e.State, Details: e.Details, Data: e.Data})
	}
	if closing {
		out = append(out, run[n-1])
	}
	return out
}

// overlayTasks applies the transaction's pending task changes of entity id to
// the stored tasks.
func overlayTasks(tasks []storage.ScheduledTask, pending []storage.TaskOp, id [16]byte) []storage.ScheduledTask {
	for i := range pending {
		op := &pending[i]
		if op.Task.EntityID != id {
			continue
		}
		j := 0
		for _, t := range tasks {
			if t.ID != op.Task.ID {
				tasks[j] = t
				j++
			}
		}
		tasks = tasks[:j]
		if !op.Delete {
			tasks = append(tasks, op.Task)
		}
	}
	return tasks
}
