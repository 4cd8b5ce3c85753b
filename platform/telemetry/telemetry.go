// Package telemetry exports traces over OTLP with the OpenTelemetry Go SDK
// when SVC_OTEL_ENABLED is set. The exporter reads the standard
// OTEL_EXPORTER_OTLP_* variables. Disabled, nothing here is built and
// callers hold a nil *T, which every method accepts: the request path pays
// one nil check. Metrics are not exported here: every latency and count is
// on the admin listener's /metrics (platform/opmetrics,
// docs/decisions/0039-one-metrics-pipeline.md).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation of spans.
const scope = "svc"

// T is the running telemetry pipeline. A nil *T is the disabled pipeline.
type T struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// Start builds the trace pipeline from the OTEL_* environment:
// OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) picks
// grpc (the default) or http/protobuf; endpoints, headers, TLS and timeouts
// are read by the exporters themselves; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the resource (service.name defaults to
// svc). An unsupported protocol is an error naming the variable.
func Start(ctx context.Context, version string, opts ...Option) (*T, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "svc"), attribute.String("service.version", version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	traceProto, err := protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if err != nil {
		return nil, err
	}
	var spanExp sdktrace.SpanExporter
	if traceProto == "grpc" {
		spanExp, err = otlptracegrpc.New(ctx)
	} else {
		spanExp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	t := &T{
		tp:   sdktrace.NewTracerProvider(o.traceOptions(sdktrace.WithBatcher(spanExp), sdktrace.WithResource(res))...),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	t.tracer = t.tp.Tracer(scope)
	return t, nil
}

// Option changes how Start builds the pipeline.
type Option func(*options)

type options struct{ sampler sdktrace.Sampler }

// WithSampler samples traces with s instead of the SDK's choice from
// OTEL_TRACES_SAMPLER (svc passes its runtime-switchable sampler, which
// starts from the same variables).
func WithSampler(s sdktrace.Sampler) Option { return func(o *options) { o.sampler = s } }

func (o options) traceOptions(base ...sdktrace.TracerProviderOption) []sdktrace.TracerProviderOption {
	if o.sampler != nil {
		base = append(base, sdktrace.WithSampler(o.sampler))
	}
	return base
}

// protocol reads the OTLP protocol for one signal: its own variable, then
// OTEL_EXPORTER_OTLP_PROTOCOL, then grpc.
func protocol(signalVar string) (string, error) {
	name, v := signalVar, os.Getenv(signalVar)
	if v == "" {
		name, v = "OTEL_EXPORTER_OTLP_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.TrimSpace(v) {
	case "", "grpc":
		return "grpc", nil
	case "http/protobuf":
		return "http/protobuf", nil
	}
	return "", fmt.Errorf("%s: svc exports OTLP over grpc or http/protobuf, got %q", name, v)
}

// Shutdown flushes what is buffered and stops the exporters.
func (t *T) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Tracer is the tracer of svc's spans.
func (t *T) Tracer() trace.Tracer { return t.tracer }

// Propagator extracts W3C trace context from incoming requests.
func (t *T) Propagator() propagation.TextMapPropagator { return t.prop }

// StorageOp starts the span of one entity storage operation
// (traced.Entities); the returned function ends it with the operation's
// error.
func (t *T) StorageOp(ctx context.Context, name, tenant string) (context.Context, func(error)) {
	ctx, span := t.StartSpan(ctx, "storage.entities."+name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("svc.tenant", tenant), attribute.String("db.operation.name", name)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// DispatchOp starts the client span of one compute dispatch of kind (processor, criteria, function) to the named
// function (traced.Dispatch).
func (t *T) DispatchOp(ctx context.Context, kind, name, tags, tenant, transition string) (context.Context, func(error)) {
	ctx, span := t.StartSpan(ctx, "compute.dispatch."+kind, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("svc.compute.function", name), attribute.String("svc.compute.tags", tags),
			attribute.String("svc.tenant", tenant), attribute.String("svc.workflow.transition", transition)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// spanKey is the user-value key under which the HTTP layer leaves the
// request's span: fasthttp's request context answers Value from its user
// values, so code given that context finds the span (see parent).
type spanKey struct{}

// SpanKey is that key, for the HTTP layer.
var SpanKey any = spanKey{}

// parent returns ctx carrying the request's span as the current span
// when ctx only holds it as a user value.
func parent(ctx context.Context) context.Context {
	if trace.SpanFromContext(ctx).SpanContext().IsValid() {
		return ctx
	}
	if sp, ok := ctx.Value(SpanKey).(trace.Span); ok {
		return trace.ContextWithSpan(ctx, sp)
	}
	return ctx
}

// StartSpan starts a child span of whatever span ctx carries.
func (t *T) StartSpan(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.tracer.Start(parent(ctx), name, opts...)
}
