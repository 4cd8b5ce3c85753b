package workflow

import (
	"context"
	"strconv"
	"time"
)

// FireResult is how a scheduled fire ended.
type FireResult int

const (
	// Fired: the transition ran; save the entity and delete the task.
	Fired FireResult = iota
	// Declined: the criterion was false; delete the task, no retry.
	Declined
	// Gone: the entity left the source state or the transition no longer
	// exists; delete the task without audit.
	Gone
)

// FireScheduled fires a due scheduled transition (docs/decisions/0018-scheduled-transitions.md, firing: the
// steps after the scheduler's task and lateness checks). There is no
// STATE_MACHINE_START/FINISH on this path. An error (criterion evaluation,
// processor) means: roll back and leave the task for a later retry.
func (e *Engine) FireScheduled(ctx context.Context, set *Set, run *Run, sourceState, transition string) (*Outcome, FireResult, error) {
	x := e.newExec(run)
	state := run.Entity.Meta.State
	if state != sourceState {
		return x.out, Gone, nil
	}
	wf := set.byState(state)
	if wf == nil {
		return x.out, Gone, nil
	}
	x.wf, x.out.Workflow = wf, wf.w.Name
	var t *ctransition
	for _, c := range wf.states[state].transitions {
		if c.t.Name == transition && c.t.Schedule != nil && !c.t.Manual && !c.t.Disabled {
			t = c
			break
		}
	}
	if t == nil {
		return x.out, Gone, nil
	}
	if t.criterion != nil {
		ok, reason, err := x.evalCriterion(ctx, wf, t, t.criterion)
		if err != nil {
			if classified(err) {
				return x.out, Fired, err
			}
			return x.out, Fired, workflowFailed("failed to evaluate transition criterion: "+errText(err), err)
		}
		if !ok {
			x.notMatched(t, reason)
			x.out.State = state
			return x.out, Declined, nil
		}
	}
	run.Entity.Meta.TransitionForLatestSave = transition
	if err := x.fire(ctx, t); err != nil {
		return x.out, Fired, err
	}
	if err := x.cascade(ctx); err != nil {
		return x.out, Fired, err
	}
	x.settle()
	x.event(EventScheduledTransitionFire, "Scheduled transition \""+transition+"\" fired from "+sourceState,
		(&objBuilder{}).str("transition", transition).str("sourceState", sourceState).done())
	return x.out, Fired, nil
}

// Expiry is the scheduler's lateness decision for a due task.
type Expiry int

const (
	// FireNow: on time, within tolerance, or without timeoutMs.
	FireNow Expiry = iota
	// WaitGrace: late by more than timeoutMs but within the grace; leave
	// the task for a later scan.
	WaitGrace
	// Expire: later than timeoutMs plus grace; delete the task and record
	// SCHEDULED_TRANSITION_EXPIRE without evaluating the criterion.
	Expire
)

// CheckLateness applies the late-fire rule with lateness = now −
// scheduledTime (docs/decisions/0018-scheduled-transitions.md).
func CheckLateness(scheduled, now time.Time, timeoutMs *int64, grace time.Duration) Expiry {
	if timeoutMs == nil {
		return FireNow
	}
	late := now.Sub(scheduled)
	limit := time.Duration(*timeoutMs) * time.Millisecond
	switch {
	case late <= limit:
		return FireNow
	case late <= limit+grace:
		return WaitGrace
	}
	return Expire
}

// ScheduledEvent builds the ARM, CANCEL and EXPIRE audit events of the
// scheduler's reconcile. scheduledTime is set on ARM only, in the form the
// task stores it: Unix milliseconds, a JSON number (docs/decisions/0018-scheduled-transitions.md). state is the entity's
// state the event is about: the settled one for ARM and EXPIRE, the
// cancelled task's source state for CANCEL.
func ScheduledEvent(typ, entityID, state, transactionID, transition, sourceState string, scheduledTime, at time.Time) Event {
	// Sized for the three fields: one allocation on every arm.
	b := (&objBuilder{b: make([]byte, 0, 96+len(transition)+len(sourceState))}).str("transition", transition).str("sourceState", sourceState)
	var details string
	switch typ {
	case EventScheduledTransitionArm:
		b.key("scheduledTime")
		b.b = strconv.AppendInt(b.b, scheduledTime.UnixMilli(), 10)
		details = "Scheduled transition \"" + transition + "\" armed for " + scheduledTime.UTC().Format(time.RFC3339Nano)
	case EventScheduledTransitionCancel:
		details = "Scheduled transition \"" + transition + "\" cancelled: entity left " + sourceState
	case EventScheduledTransitionExpire:
		details = "Scheduled transition \"" + transition + "\" expired"
	}
	return Event{Type: typ, EntityID: entityID, State: state, TransactionID: transactionID, Details: details, Data: b.done(), Time: at}
}
