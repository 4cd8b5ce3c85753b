package workflow

import (
	"context"
	"fmt"

	"svc/apierr"
)

// runProcessors runs a transition's pipeline (notes §4.5). Processors run
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
		if sp := x.run.Savepoints; sp != nil {
			return sp.WithSavepoint(ctx, func(ctx context.Context) error {
				_, err := x.dispatch(ctx, t, p, x.run.TxToken)
				return err
			})
		}
		_, err := x.dispatch(ctx, t, p, x.run.TxToken)
		return err // returned data is discarded in this mode
	case ModeCommitBeforeDispatch:
		if x.run.Segmenter == nil {
			return apierr.New(apierr.ServerError, fmt.Sprintf("processor %s: COMMIT_BEFORE_DISPATCH needs a transaction segmenter, none is configured", p.p.Name))
		}
		token, err := x.run.Segmenter.CommitBeforeDispatch(ctx, x.run.Entity, p.p.Config.StartNewTxOnDispatch)
		if err != nil {
			if _, ok := apierr.As(err); ok {
				return err
			}
			return &apierr.Error{Code: apierr.ServerError, Message: "commit before dispatch failed", Cause: err}
		}
		res, err := x.dispatch(ctx, t, p, token)
		if err != nil {
			return err
		}
		x.apply(res)
		return nil
	default: // SYNC, ASYNC_SAME_TX and empty run inline
		res, err := x.dispatch(ctx, t, p, x.run.TxToken)
		if err != nil {
			return err
		}
		x.apply(res)
		return nil
	}
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
