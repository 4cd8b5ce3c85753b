package workflow

import (
	"context"
	"fmt"

	"svc/platform/apierr"
)

// runProcessors runs a transition's pipeline (docs/decisions/0017-workflow-engine.md). Processors run
// in order, each on the data the previous one left.
func (x *exec) runProcessors(ctx context.Context, t *ctransition) error {
	if len(t.procs) == 0 {
		return nil
	}
	x.event(EventPauseForProcessing, "Paused for processors: "+t.names, nil)
	for _, p := range t.procs {
		err := x.runProcessor(ctx, t, p)
		x.event(EventStateProcessResult, resultDetails(p.p.Name, err),
			(&objBuilder{}).boolean("success", err == nil).str("mode", p.p.ExecutionMode).done())
		if err == nil {
			continue
		}
		if p.mode == ModeAsyncNewTx {
			x.log().Warn("ASYNC_NEW_TX processor failed; transition continues",
				"processor", p.p.Name, "transition", t.t.Name, "entityId", x.run.Entity.Meta.ID, "error", err)
			continue
		}
		x.event(EventStateProcessResult, fmt.Sprintf("Transition %q stopped: processor %q failed", t.t.Name, p.p.Name),
			(&objBuilder{}).boolean("success", false).done())
		return err
	}
	return nil
}

func resultDetails(name string, err error) string {
	if err == nil {
		return "Processor \"" + name + "\" succeeded"
	}
	return "Processor \"" + name + "\" failed"
}

func (x *exec) runProcessor(ctx context.Context, t *ctransition, p *cprocessor) error {
	if p.p.Type == "internalized" {
		return workflowFailed(fmt.Sprintf("processor %s failed: execution type \"internalized\" is not yet implemented", p.p.Name), nil)
	}
	switch p.mode {
	case ModeAsyncNewTx:
		return x.runInSavepoint(ctx, t, p)
	case ModeCommitBeforeDispatch:
		return x.runSegmented(ctx, t, p)
	default: // SYNC, ASYNC_SAME_TX and empty run inline
		res, err := x.dispatch(ctx, t, p, x.run.txToken())
		if err != nil {
			return err
		}
		x.apply(res)
		return nil
	}
}

// runInSavepoint runs an ASYNC_NEW_TX processor. Its returned data is
// discarded. On failure everything the run buffered since the savepoint
// is rolled back: the engine's own effects (events, warnings, the
// entity's data and state) here, and whatever the caller's
// SavepointRunner holds for the transaction. See the package doc for what
// a savepoint is in svc.
func (x *exec) runInSavepoint(ctx context.Context, t *ctransition, p *cprocessor) error {
	mark := x.savepoint()
	body := func(ctx context.Context) error {
		_, err := x.dispatch(ctx, t, p, x.run.txToken())
		return err
	}
	var err error
	if sp := x.run.Savepoints; sp != nil {
		err = sp.WithSavepoint(ctx, body)
	} else {
		err = body(ctx)
	}
	if err != nil {
		x.rollbackTo(mark)
	}
	return err
}

// savepointMark is what an in-engine savepoint restores.
type savepointMark struct {
	events, warnings int
	state            string
	data             []byte
}

func (x *exec) savepoint() savepointMark {
	return savepointMark{events: len(x.out.Events), warnings: len(x.out.Warnings),
		state: x.run.Entity.Meta.State, data: x.run.Entity.Data}
}

func (x *exec) rollbackTo(m savepointMark) {
	x.out.Events = x.out.Events[:m.events]
	x.out.Warnings = x.out.Warnings[:m.warnings]
	x.run.Entity.Meta.State, x.run.Entity.Data = m.state, m.data
}

// runSegmented runs a COMMIT_BEFORE_DISPATCH processor (docs/decisions/0017-workflow-engine.md): the
// Segmenter commits the entity as it is now, with the events recorded so
// far, in the transaction the run has been writing (TX_pre); the member is
// called with no transaction open; its result is applied to the entity,
// which the caller writes in the transaction the Segmenter began (TX_post)
// with a compare-and-set against TX_pre's revision.
func (x *exec) runSegmented(ctx context.Context, t *ctransition, p *cprocessor) error {
	if x.run.Segmenter == nil {
		return workflowFailed(fmt.Sprintf("processor %s: COMMIT_BEFORE_DISPATCH needs the entity in a transaction of its own; "+
			"write it alone (one entity per request, or transactionWindow=1)", p.p.Name), nil)
	}
	token, err := x.run.Segmenter.CommitBeforeDispatch(ctx, &Segment{
		Entity: x.run.Entity, Events: x.out.Events, StartNewTx: p.p.Config.StartNewTxOnDispatch})
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return err
		}
		return &apierr.Error{Code: apierr.ServerError, Message: "commit before dispatch failed", Cause: err}
	}
	// The events are durable in TX_pre now; what follows goes to TX_post.
	x.out.Events = make([]Event, 0, 8)
	x.out.Segments++
	res, err := x.dispatch(ctx, t, p, token)
	// TX_post's events happen after TX_pre's commit: a fresh instant keeps
	// the two transactions' events in order on the trail.
	x.now = x.e.clock()
	if err != nil {
		return err
	}
	x.apply(res)
	return nil
}

// apply replaces the entity's data with a processor's output unless the
// output is absent or JSON null (null means "no change").
func (x *exec) apply(res *ProcessorResult) {
	if !isNull(res.Data) {
		x.run.Entity.Data = append([]byte(nil), res.Data...)
	}
}

func (x *exec) dispatch(ctx context.Context, t *ctransition, p *cprocessor, token string) (*ProcessorResult, error) {
	if x.e.Dispatcher == nil {
		return nil, NoMemberForTag(p.p.Config.CalculationNodesTags)
	}
	call := &ProcessorCall{
		Call:      x.call(x.wf, t, p.tags, p.p.Config.CalculationNodesTags, p.attach, p.timeout, p.p.Config.Context),
		Processor: p.p.Name, ExecutionMode: p.p.ExecutionMode,
	}
	call.TxToken = token
	res, err := x.e.Dispatcher.DispatchProcessor(ctx, call)
	if err != nil {
		if classified(err) {
			return nil, err
		}
		return nil, workflowFailed(fmt.Sprintf("processor %s failed: processor dispatch failed: %s", p.p.Name, errText(err)), err)
	}
	x.out.Warnings = append(x.out.Warnings, res.Warnings...)
	if !res.Success {
		msg := "processor returned failure"
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		return nil, workflowFailed(fmt.Sprintf("processor %s failed: processor dispatch failed: %s", p.p.Name, msg), nil)
	}
	return res, nil
}
