// Package opmetrics holds the latency histograms of svc's internal
// operations (entity storage, compute dispatch, gRPC calls) in the
// VictoriaMetrics set the admin listener's /metrics writes: the one metrics
// pipeline (docs/decisions/0039-one-metrics-pipeline.md). OpenTelemetry
// carries traces only.
//
// Every series is created on its first sample, so /metrics lists only
// operations that happened, and its labels come from fixed lists (an
// operation name, an outcome, a gRPC method of svc's own service and a
// status code), never from tenants, entities or client input. After a
// series exists, a sample costs an atomic load, one clock read and two
// atomic adds (Histogram): no allocation, no lock.
package opmetrics

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Metric names.
const (
	StorageDuration  = "svc_storage_operation_duration_seconds"
	DispatchDuration = "svc_compute_dispatch_duration_seconds"
	GRPCDuration     = "grpc_server_handling_seconds"
)

// Help are the # HELP texts of these metrics, for the /metrics writer.
var Help = map[string]string{
	StorageDuration:  "Entity storage operation latency in seconds, by engine, operation and outcome (ok or error).",
	DispatchDuration: "Compute dispatch latency in seconds (a call to a compute member, here or on a peer), by kind (processor, criteria, function) and outcome.",
	GRPCDuration:     "gRPC call latency in seconds on the compute listener, by method and status code; a streaming call lasts as long as its stream.",
}

// storageBuckets reach below the default 5 ms: an in-memory or cached
// read takes microseconds.
var storageBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

// Set creates the histograms in one metrics set. A nil *Set records
// nothing.
type Set struct {
	set *metrics.Set

	mu    sync.RWMutex
	grpc  map[string]*grpcMethod
	hists map[string]*Histogram
}

// New records into set (the set /metrics writes).
func New(set *metrics.Set) *Set {
	s := &Set{set: set, grpc: map[string]*grpcMethod{}, hists: map[string]*Histogram{}}
	set.RegisterMetricsWriter(s.writeHistograms)
	return s
}

// Op is one operation's histograms, one per outcome, each created on its
// first sample. A nil *Op records nothing.
type Op struct {
	set     *Set
	buckets []float64
	names   [2]string // ok, error
	h       [2]atomic.Pointer[Histogram]
}

// Storage is the histogram pair of one storage operation (Get, Commit,
// ...) of engine (memory, sqlite, postgres).
func (s *Set) Storage(engine, op string) *Op {
	return s.op(StorageDuration, `engine="`+engine+`",op="`+op+`"`, storageBuckets)
}

// Dispatch is the histogram pair of one kind of compute dispatch
// (processor, criteria, function).
func (s *Set) Dispatch(kind string) *Op {
	return s.op(DispatchDuration, `kind="`+kind+`"`, metrics.PrometheusHistogramDefaultBuckets)
}

func (s *Set) op(name, labels string, buckets []float64) *Op {
	if s == nil {
		return nil
	}
	return &Op{set: s, buckets: buckets, names: [2]string{
		name + `{` + labels + `,outcome="ok"}`,
		name + `{` + labels + `,outcome="error"}`,
	}}
}

// Since records the time since start, under the outcome of err.
func (o *Op) Since(start time.Time, err error) {
	if o == nil {
		return
	}
	o.hist(err).Update(time.Since(start).Seconds())
}

// Done records the time since start (a Now reading), under the outcome
// of err: the form of the hot paths, one clock read at each end.
func (o *Op) Done(start int64, err error) {
	if o == nil {
		return
	}
	o.hist(err).Done(start)
}

func (o *Op) hist(err error) *Histogram {
	i := 0
	if err != nil {
		i = 1
	}
	h := o.h[i].Load()
	if h == nil {
		h = o.set.Histogram(o.names[i], o.buckets)
		o.h[i].Store(h)
	}
	return h
}

// grpcMethod holds one method's histograms by status code.
type grpcMethod struct {
	name  string
	codes [codes.Unauthenticated + 2]atomic.Pointer[metrics.PrometheusHistogram]
}

// method returns the histograms of a method of the gRPC server. The server
// only calls interceptors for the methods it registered, so the map is
// bounded by svc's service definition.
func (s *Set) method(full string) *grpcMethod {
	s.mu.RLock()
	m := s.grpc[full]
	s.mu.RUnlock()
	if m != nil {
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m = s.grpc[full]; m == nil {
		m = &grpcMethod{name: full}
		s.grpc[full] = m
	}
	return m
}

func (s *Set) observeGRPC(full string, start time.Time, err error) {
	code := codes.OK
	if err != nil {
		code = status.Code(err)
	}
	m := s.method(full)
	i := int(code)
	if i < 0 || i >= len(m.codes)-1 {
		i = len(m.codes) - 1
	}
	h := m.codes[i].Load()
	if h == nil {
		c := code.String()
		if i == len(m.codes)-1 {
			c = "Other"
		}
		h = s.set.GetOrCreatePrometheusHistogram(GRPCDuration + `{method="` + full + `",code="` + c + `"}`)
		m.codes[i].Store(h)
	}
	h.UpdateDuration(start)
}

// GRPCServerOptions are the interceptors that time every gRPC call; none
// on a nil *Set.
func (s *Set) GRPCServerOptions() []grpc.ServerOption {
	if s == nil {
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			start := time.Now()
			resp, err := h(ctx, req)
			s.observeGRPC(info.FullMethod, start, err)
			return resp, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			start := time.Now()
			err := h(srv, ss)
			s.observeGRPC(info.FullMethod, start, err)
			return err
		}),
	}
}
