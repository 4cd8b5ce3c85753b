package workflow

import (
	"context"
	"fmt"
	"time"
)

// PlannedArm is one scheduled transition of a settled state with when it
// fires (or that it is born expired).
type PlannedArm struct {
	Transition string
	Arming     Arming
}

// HasSchedules reports whether any active workflow of the set declares a
// scheduled transition. Writes under a set without one do no task I/O
// (docs/decisions/0018-scheduled-transitions.md).
func (s *Set) HasSchedules() bool {
	for _, c := range s.workflows {
		if !c.w.IsActive() {
			continue
		}
		for _, st := range c.states {
			for _, t := range st.transitions {
				if t.t.Schedule != nil {
					return true
				}
			}
		}
	}
	return false
}

// ScheduledTransition is the armable scheduled transition name of state in
// the workflow that owns state (docs/decisions/0017-workflow-engine.md), or nil when there is none: the
// scheduler's "transition no longer in the workflow" check.
func (s *Set) ScheduledTransition(state, name string) *Transition {
	c := s.byState(state)
	if c == nil {
		return nil
	}
	for _, t := range c.states[state].transitions {
		if t.t.Name == name && t.t.Schedule != nil && !t.t.Manual && !t.t.Disabled {
			return t.t
		}
	}
	return nil
}

// Arm resolves the fire time of every transition out.Scheduled lists, for
// run's entity as it settled: a delayMs schedule from the engine's clock,
// a function schedule by a synchronous EntityFunctionCalculationRequest
// (docs/decisions/0018-scheduled-transitions.md). Dispatch failures are returned as the engine returns them
// (503 codes pass through); a bad result is 500
// SCHEDULE_FUNCTION_INVALID_RESULT; either fails the write.
func (e *Engine) Arm(ctx context.Context, run *Run, out *Outcome) ([]PlannedArm, error) {
	if len(out.Scheduled) == 0 {
		return nil, nil
	}
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	plans := make([]PlannedArm, 0, len(out.Scheduled))
	for _, t := range out.Scheduled {
		s := t.Schedule
		if s.Function == nil {
			plans = append(plans, PlannedArm{Transition: t.Name, Arming: StaticArming(s, now)})
			continue
		}
		a, err := e.armFunction(ctx, run, out, t, now)
		if err != nil {
			return nil, err
		}
		plans = append(plans, PlannedArm{Transition: t.Name, Arming: a})
	}
	return plans, nil
}

func (e *Engine) armFunction(ctx context.Context, run *Run, out *Outcome, t *Transition, now time.Time) (Arming, error) {
	f := t.Schedule.Function
	fd, ok := e.Dispatcher.(FunctionDispatcher)
	if !ok || fd == nil {
		return Arming{}, NoMemberForTag(f.CalculationNodesTags)
	}
	call := &FunctionCall{Function: f.Name, Call: Call{
		Tenant: run.Tenant, Auth: run.Auth, TxToken: run.txToken(), TransactionID: run.TransactionID,
		Meta: run.Entity.Meta, Workflow: out.Workflow, Transition: t.Name, StateFrom: out.State, StateTo: t.Next,
		Tags: splitTags(f.CalculationNodesTags), TagsCSV: f.CalculationNodesTags,
		Timeout: timeoutOf(f.ResponseTimeoutMs), Parameters: f.Context,
	}}
	if f.AttachEntity == nil || *f.AttachEntity {
		call.Data = run.Entity.Data
	}
	res, err := fd.DispatchFunction(ctx, call)
	if err != nil {
		if classified(err) {
			return Arming{}, err
		}
		return Arming{}, workflowFailed(fmt.Sprintf("schedule function %s failed: function dispatch failed: %s", f.Name, errText(err)), err)
	}
	out.Warnings = append(out.Warnings, res.Warnings...)
	if !res.Success {
		msg := "function returned failure"
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		return Arming{}, workflowFailed(fmt.Sprintf("schedule function %s failed: %s", f.Name, msg), nil)
	}
	return ResolveFunctionArming(f.Name, res, now)
}
