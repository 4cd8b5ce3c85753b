package traced

import (
	"context"

	"svc/platform/telemetry"
	"svc/workflow"
)

// Dispatcher is what the compute server offers the workflow engine:
// processors, criteria and schedule functions.
type Dispatcher interface {
	workflow.ProcessorDispatcher
	workflow.FunctionDispatcher
}

// Dispatch wraps d so each compute dispatch is a client span and a duration
// sample. Without telemetry (t nil) it returns d itself.
func Dispatch(t *telemetry.T, d Dispatcher) Dispatcher {
	if t == nil {
		return d
	}
	return &tracedDispatcher{d: d, t: t}
}

type tracedDispatcher struct {
	d Dispatcher
	t *telemetry.T
}

func (x *tracedDispatcher) start(ctx context.Context, kind, name string, c *workflow.Call) (context.Context, func(error)) {
	return x.t.DispatchOp(ctx, kind, name, c.TagsCSV, c.Tenant, c.Transition)
}

func (x *tracedDispatcher) DispatchProcessor(ctx context.Context, call *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
	ctx, end := x.start(ctx, "processor", call.Processor, &call.Call)
	r, err := x.d.DispatchProcessor(ctx, call)
	end(err)
	return r, err
}

func (x *tracedDispatcher) DispatchCriteria(ctx context.Context, call *workflow.CriteriaCall) (*workflow.CriteriaResult, error) {
	ctx, end := x.start(ctx, "criteria", call.Criteria, &call.Call)
	r, err := x.d.DispatchCriteria(ctx, call)
	end(err)
	return r, err
}

func (x *tracedDispatcher) DispatchFunction(ctx context.Context, call *workflow.FunctionCall) (*workflow.FunctionResult, error) {
	ctx, end := x.start(ctx, "function", call.Function, &call.Call)
	r, err := x.d.DispatchFunction(ctx, call)
	end(err)
	return r, err
}
