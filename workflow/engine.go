package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Limits of a cascade.
const (
	DefaultMaxStateVisits = 10
	// MaxCascadeDepth caps the transitions one cascade may fire.
	MaxCascadeDepth = 100
	// MaxReasonBytes caps a function criterion's reason in details.
	MaxReasonBytes = 2048
)

// Engine runs entities through workflows. It holds no per-entity state and
// is safe for concurrent use.
type Engine struct {
	Criteria   CriteriaEvaluator
	Dispatcher ProcessorDispatcher
	// MaxStateVisits is SVC_MAX_STATE_VISITS; 0 or less means 10.
	MaxStateVisits int
	Now            func() time.Time
	Log            *slog.Logger
}

// Entity is the in-memory entity a run works on. The engine updates Data
// (processor output) and Meta.State. After a failed run both may be part
// way along (a later hop of a cascade failed): the caller rolls its
// transaction back and discards the entity.
type Entity struct {
	Meta Meta
	Data []byte
}

// Run is one engine invocation inside the caller's transaction.
type Run struct {
	Tenant string
	Auth   Auth
	Entity *Entity
	// TransactionID is the entry transaction; every event carries it.
	TransactionID string
	// TxToken is the routing token members use to join the transaction.
	TxToken string
	// MintTxToken, when set and TxToken is empty, mints the token at the
	// first dispatch, so runs that call no member never sign one.
	MintTxToken func() string
	Segmenter   Segmenter
	Savepoints  SavepointRunner
	// Publish, when set, is called with the entity as it stands each time
	// a dispatch is about to hand members the transaction's token, so
	// members calling back with it read the entity as the run has it.
	Publish func(*Entity)
}

// txToken is the run's routing token, minted on first use.
func (r *Run) txToken() string {
	if r.Publish != nil {
		r.Publish(r.Entity)
	}
	if r.TxToken == "" && r.MintTxToken != nil {
		r.TxToken = r.MintTxToken()
	}
	return r.TxToken
}

// Outcome is what a run did. It is returned on failure too, holding the
// events recorded up to the failure.
type Outcome struct {
	Events []Event
	// Warnings are request diagnostics (e.g. the default workflow
	// substitution, member warnings); gRPC responses carry them.
	Warnings []string
	Workflow string
	// State is the settled state.
	State string
	// Segments counts the COMMIT_BEFORE_DISPATCH commits the run made
	// through Run.Segmenter; Events then holds only what came after the
	// last one.
	Segments int
	// Scheduled are the transitions of the settled state that carry a
	// schedule; the caller arms them (and cancels tasks of other states).
	Scheduled []*Transition
}

// Create runs a new entity: select a workflow by criterion, enter its
// initial state and cascade (docs/decisions/0017-workflow-engine.md, entry points).
func (e *Engine) Create(ctx context.Context, set *Set, run *Run) (*Outcome, error) {
	x := e.newExec(run)
	run.Entity.Meta.State = ""
	x.event(EventStateMachineStart, "State machine started", nil)
	wf, err := x.selectWorkflow(ctx, set)
	if err != nil {
		return x.out, err
	}
	x.wf = wf
	x.setState(wf.w.InitialState)
	if err := x.cascade(ctx); err != nil {
		return x.out, err
	}
	return x.finish(), nil
}

// Transition fires the named transition on an existing entity, then
// cascades (docs/decisions/0017-workflow-engine.md, entry points).
func (e *Engine) Transition(ctx context.Context, set *Set, run *Run, name string) (*Outcome, error) {
	x := e.newExec(run)
	x.event(EventStateMachineStart, "State machine started", nil)
	state := run.Entity.Meta.State
	wf := set.byState(state)
	if wf == nil {
		return x.out, workflowFailed(fmt.Sprintf("no workflow contains state %q", state), nil)
	}
	x.use(wf)
	if err := x.attempt(ctx, name); err != nil {
		return x.out, err
	}
	if err := x.cascade(ctx); err != nil {
		return x.out, err
	}
	return x.finish(), nil
}

// Loopback re-runs the automated transitions of an existing entity's state
// after an update without a transition (docs/decisions/0017-workflow-engine.md, entry points).
func (e *Engine) Loopback(ctx context.Context, set *Set, run *Run) (*Outcome, error) {
	x := e.newExec(run)
	x.event(EventStateMachineStart, "State machine started", nil)
	state := run.Entity.Meta.State
	wf := set.byState(state)
	if wf == nil {
		x.event(EventForceSuccess, fmt.Sprintf("No active workflow contains state %q; update accepted without transitions", state), nil)
		x.event(EventStateMachineFinish, "State machine finished", successData)
		x.out.State = state
		return x.out, nil
	}
	x.found(wf, fmt.Sprintf("Workflow %q selected (contains state %q)", wf.w.Name, state))
	if err := x.cascade(ctx); err != nil {
		return x.out, err
	}
	return x.finish(), nil
}

var successData = []byte(`{"success":true}`)

// exec is the state of one run.
type exec struct {
	e       *Engine
	run     *Run
	wf      *compiled
	out     *Outcome
	now     time.Time
	outcome Outcome // out points here: one allocation for both
}

func (e *Engine) clock() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) newExec(run *Run) *exec {
	x := &exec{e: e, run: run, now: e.clock()}
	x.outcome.Events = make([]Event, 0, 8)
	x.out = &x.outcome
	return x
}

func (x *exec) log() *slog.Logger {
	if x.e.Log != nil {
		return x.e.Log
	}
	return slog.Default()
}

func (x *exec) event(typ, details string, data []byte) {
	x.out.Events = append(x.out.Events, Event{
		Type: typ, EntityID: x.run.Entity.Meta.ID, State: x.run.Entity.Meta.State,
		TransactionID: x.run.TransactionID, Details: details, Data: data, Time: x.now,
	})
}

func (x *exec) setState(s string) { x.run.Entity.Meta.State = s }

// found records the selection of a new entity's workflow.
func (x *exec) found(wf *compiled, details string) {
	x.use(wf)
	x.event(EventWorkflowFound, details, nil)
}

// use runs wf without an event: a manual transition's workflow is the one
// holding the entity's state, looked up rather than selected, and the
// audit trail has no WORKFLOW_FOUND for it (docs/decisions/0017-workflow-engine.md).
func (x *exec) use(wf *compiled) {
	x.wf = wf
	x.out.Workflow = wf.w.Name
}

func (x *exec) finish() *Outcome {
	x.settle()
	x.event(EventStateMachineFinish, "State machine finished", successData)
	return x.out
}

// settle records the settled state and its scheduled transitions to arm.
func (x *exec) settle() {
	state := x.run.Entity.Meta.State
	x.out.State = state
	if st := x.wf.states[state]; st != nil {
		for _, t := range st.transitions {
			if t.t.Schedule != nil && !t.t.Manual && !t.t.Disabled {
				x.out.Scheduled = append(x.out.Scheduled, t.t)
			}
		}
	}
}

func (x *exec) maxVisits() int {
	if x.e.MaxStateVisits <= 0 {
		return DefaultMaxStateVisits
	}
	return x.e.MaxStateVisits
}

// selectWorkflow picks the workflow of a new entity (docs/decisions/0017-workflow-engine.md, selection).
func (x *exec) selectWorkflow(ctx context.Context, set *Set) (*compiled, error) {
	if len(set.workflows) == 0 {
		x.substituted("no_workflows_imported")
		x.found(set.def, fmt.Sprintf("Workflow %q selected (no criterion)", set.def.w.Name))
		return set.def, nil
	}
	for _, c := range set.workflows {
		if !c.w.IsActive() {
			continue
		}
		if c.criterion == nil {
			x.found(c, fmt.Sprintf("Workflow %q selected (no criterion)", c.w.Name))
			return c, nil
		}
		ok, reason, err := x.evalCriterion(ctx, c, nil, c.criterion)
		if err != nil {
			if classified(err) {
				return nil, err
			}
			return nil, workflowFailed("failed to evaluate workflow criterion: "+errText(err), err)
		}
		if ok {
			x.found(c, fmt.Sprintf("Workflow %q selected (criterion matched)", c.w.Name))
			return c, nil
		}
		if reason == "" {
			reason = "criterion did not match"
		}
		x.event(EventWorkflowSkip, fmt.Sprintf("Workflow %q skipped: %s", c.w.Name, reason),
			(&objBuilder{}).str("workflowName", c.w.Name).str("reason", reason).done())
	}
	x.substituted("no_criterion_matched")
	x.found(set.def, "No imported workflow matched; using default workflow")
	return set.def, nil
}

func (x *exec) substituted(reason string) {
	x.out.Warnings = append(x.out.Warnings, "default workflow substituted: "+reason)
	x.log().Warn("default workflow substituted", "reason", reason, "entityId", x.run.Entity.Meta.ID)
}

// attempt fires a transition by name (docs/decisions/0017-workflow-engine.md, named transitions).
func (x *exec) attempt(ctx context.Context, name string) error {
	state := x.run.Entity.Meta.State
	var t *ctransition
	if st := x.wf.states[state]; st != nil {
		for _, c := range st.transitions {
			if c.t.Name == name {
				t = c
				break
			}
		}
	}
	var msg string
	switch {
	case t == nil:
		msg = fmt.Sprintf("transition %q not found in state %q: transition not found", name, state)
	case t.t.Disabled:
		msg = fmt.Sprintf("transition %q is disabled in state %q", name, state)
	case t.t.Schedule != nil:
		msg = fmt.Sprintf("transition %q in state %q is scheduled and fires automatically; it is not manually fireable", name, state)
	}
	if msg != "" {
		x.event(EventTransitionNotFound, msg, (&objBuilder{}).str("transition", name).done())
		return transitionNotFound(msg)
	}
	if t.criterion != nil {
		ok, reason, err := x.evalCriterion(ctx, x.wf, t, t.criterion)
		if err != nil {
			if classified(err) {
				return err
			}
			return workflowFailed("failed to evaluate transition criterion: "+errText(err), err)
		}
		if !ok {
			x.notMatched(t, reason)
			msg := fmt.Sprintf("transition %q criterion not matched", name)
			if reason != "" {
				msg += ": " + reason
			}
			return workflowFailed(msg, nil)
		}
	}
	return x.fire(ctx, t)
}

func (x *exec) notMatched(t *ctransition, reason string) {
	what := t.criterion.kind
	if t.criterion.fn != nil {
		what = t.criterion.fn.name
	}
	r := reason
	if r == "" {
		r = "criterion did not match"
	}
	x.event(EventTransitionNotMatchCriteria,
		fmt.Sprintf("Transition %q criterion not matched: %s", t.t.Name, r),
		(&objBuilder{}).str("workflowName", x.wf.w.Name).str("transition", t.t.Name).
			str("criterion", what).str("reason", r).done())
}

// cascade fires automated transitions until the state is stable (docs/decisions/0017-workflow-engine.md,
// cascade).
func (x *exec) cascade(ctx context.Context) error {
	var visits visitCounter
	limit := x.maxVisits()
	depth := 0
	for {
		state := x.run.Entity.Meta.State
		if n := visits.inc(state); n > limit {
			msg := fmt.Sprintf("state machine aborted: state %q visited %d times (limit: %d)", state, n, limit)
			x.event(EventCancel, msg, nil)
			return workflowFailed(msg, nil)
		}
		st := x.wf.states[state]
		if st == nil {
			return nil
		}
		var fire *ctransition
		for _, t := range st.transitions {
			if !t.t.Automated() {
				continue
			}
			if t.criterion != nil {
				ok, reason, err := x.evalCriterion(ctx, x.wf, t, t.criterion)
				if err != nil {
					if classified(err) {
						return err
					}
					return workflowFailed("failed to evaluate transition criterion: "+errText(err), err)
				}
				if !ok {
					x.notMatched(t, reason)
					continue
				}
			}
			fire = t
			break
		}
		if fire == nil {
			return nil
		}
		if depth >= MaxCascadeDepth {
			msg := fmt.Sprintf("cascade depth exceeded (%d) at state %q", MaxCascadeDepth, state)
			x.event(EventCancel, msg, nil)
			return workflowFailed(msg, nil)
		}
		depth++
		if err := x.fire(ctx, fire); err != nil {
			return err
		}
	}
}

// fire runs a transition's processors and moves the entity.
func (x *exec) fire(ctx context.Context, t *ctransition) error {
	if err := x.runProcessors(ctx, t); err != nil {
		return err
	}
	from := x.run.Entity.Meta.State
	x.event(EventTransitionMake, "Transition \""+t.t.Name+"\": "+from+" → "+t.t.Next, nil)
	x.setState(t.t.Next)
	return nil
}

// visitCounter counts state visits. Cascades touch few states, so the
// first ones live in fixed arrays (no allocation); more spill to slices.
type visitCounter struct {
	n      int
	names  [8]string
	counts [8]int
	more   []string
	moreN  []int
}

func (v *visitCounter) inc(s string) int {
	for i := 0; i < v.n; i++ {
		if v.names[i] == s {
			v.counts[i]++
			return v.counts[i]
		}
	}
	for i, n := range v.more {
		if n == s {
			v.moreN[i]++
			return v.moreN[i]
		}
	}
	if v.n < len(v.names) {
		v.names[v.n], v.counts[v.n] = s, 1
		v.n++
		return 1
	}
	v.more = append(v.more, s)
	v.moreN = append(v.moreN, 1)
	return 1
}

// capReason cuts a member-supplied reason to MaxReasonBytes on a UTF-8
// boundary.
func capReason(s string) string {
	if len(s) <= MaxReasonBytes {
		return s
	}
	i := MaxReasonBytes
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
