package traced

import (
	"context"

	"svc/platform/opmetrics"
	"svc/platform/telemetry"
	"svc/workflow"
)

// Dispatcher is what the compute server offers the workflow engine:
// processors, criteria and schedule functions.
type Dispatcher interface {
	workflow.ProcessorDispatcher
	workflow.FunctionDispatcher
}

// Dispatch wraps d so each compute dispatch is a duration sample in m
// and, with telemetry, a client span. With neither (t and m nil) it
// returns d itself.
func Dispatch(t *telemetry.T, m *opmetrics.Set, d Dispatcher) Dispatcher {
	if t == nil && m == nil {
		return d
	}
	return &tracedDispatcher{d: d, t: t,
		processor: m.Dispatch("processor"), criteria: m.Dispatch("criteria"), function: m.Dispatch("function")}
}

type tracedDispatcher struct {
	d                             Dispatcher
	t                             *telemetry.T
	processor, criteria, function *opmetrics.Op
}

func (x *tracedDispatcher) begin(ctx context.Context, op *opmetrics.Op, kind, name string, c *workflow.Call) (context.Context, call) {
	cl := call{start: opmetrics.Now(), op: op}
	if x.t != nil {
		ctx, cl.end = x.t.DispatchOp(ctx, kind, name, c.TagsCSV, c.Tenant, c.Transition)
	}
	return ctx, cl
}

func (x *tracedDispatcher) DispatchProcessor(ctx context.Context, call *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
	ctx, c := x.begin(ctx, x.processor, "processor", call.Processor, &call.Call)
	r, err := x.d.DispatchProcessor(ctx, call)
	c.done(err)
	return r, err
}

func (x *tracedDispatcher) DispatchCriteria(ctx context.Context, call *workflow.CriteriaCall) (*workflow.CriteriaResult, error) {
	ctx, c := x.begin(ctx, x.criteria, "criteria", call.Criteria, &call.Call)
	r, err := x.d.DispatchCriteria(ctx, call)
	c.done(err)
	return r, err
}

func (x *tracedDispatcher) DispatchFunction(ctx context.Context, call *workflow.FunctionCall) (*workflow.FunctionResult, error) {
	ctx, c := x.begin(ctx, x.function, "function", call.Function, &call.Call)
	r, err := x.d.DispatchFunction(ctx, call)
	c.done(err)
	return r, err
}
