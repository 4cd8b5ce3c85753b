package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"svc/workflow"
)

// Dispatcher is what the compute server offers the workflow engine:
// processors, criteria and schedule functions.
type Dispatcher interface {
	workflow.ProcessorDispatcher
	workflow.FunctionDispatcher
}

// Dispatch wraps d so each compute dispatch is a client span and a duration
// sample. Without telemetry it returns d itself.
func (t *T) Dispatch(d Dispatcher) Dispatcher {
	if t == nil {
		return d
	}
	return &tracedDispatcher{d: d, t: t}
}

type tracedDispatcher struct {
	d Dispatcher
	t *T
}

func (x *tracedDispatcher) start(ctx context.Context, kind, name string, c *workflow.Call) (context.Context, func(error)) {
	begin := time.Now()
	ctx, span := x.t.StartSpan(ctx, "compute.dispatch."+kind, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("svc.compute.function", name), attribute.String("svc.compute.tags", c.TagsCSV),
			attribute.String("svc.tenant", c.Tenant), attribute.String("svc.workflow.transition", c.Transition)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		x.t.dispatchDuration.Record(ctx, time.Since(begin).Seconds(),
			metric.WithAttributes(attribute.String("svc.compute.kind", kind), attribute.Bool("error", err != nil)))
	}
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
