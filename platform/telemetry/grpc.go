package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPCServerOptions are the interceptors that make each gRPC call a server
// span (continuing a traceparent in the metadata); none without telemetry.
// The call's latency goes to /metrics (opmetrics.Set.GRPCServerOptions).
func (t *T) GRPCServerOptions() []grpc.ServerOption {
	if t == nil {
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, end := t.rpc(ctx, info.FullMethod)
			resp, err := h(ctx, req)
			end(err)
			return resp, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, end := t.rpc(ss.Context(), info.FullMethod)
			err := h(srv, &spanStream{ServerStream: ss, ctx: ctx})
			end(err)
			return err
		}),
	}
}

func (t *T) rpc(ctx context.Context, method string) (context.Context, func(error)) {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = t.prop.Extract(ctx, metadataCarrier(md))
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.method", method)))
	return ctx, func(err error) {
		code := status.Code(err)
		span.SetAttributes(attribute.String("rpc.grpc.status_code", code.String()))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// spanStream hands the stream handler the context carrying the call's span.
type spanStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *spanStream) Context() context.Context { return s.ctx }

// metadataCarrier reads W3C trace headers from gRPC metadata.
type metadataCarrier metadata.MD

var _ propagation.TextMapCarrier = metadataCarrier{}

func (m metadataCarrier) Get(k string) string {
	if v := metadata.MD(m).Get(k); len(v) > 0 {
		return v[0]
	}
	return ""
}
func (m metadataCarrier) Set(k, v string) { metadata.MD(m).Set(k, v) }
func (m metadataCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
