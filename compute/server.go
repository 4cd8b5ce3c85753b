// Package compute is svc's gRPC listener for compute members: the
// CloudEventsService with its startStreaming protocol (join, greet,
// keep-alive, calculation requests and responses), the member registry with
// tag routing, and the remote workflow.ProcessorDispatcher built on it.
// The CRUD RPCs of the same service are served by compute/crud
// (Start's crud); this package knows no domain service.
package compute

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"svc/cluster"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// Config is the server side of the compute protocol.
type Config struct {
	// KeepaliveInterval is how often each member is checked and pinged
	// (SVC_KEEPALIVE_INTERVAL).
	KeepaliveInterval time.Duration
	// KeepaliveTimeout is the silence (or write stall) after which a member
	// is evicted (SVC_KEEPALIVE_TIMEOUT). It also bounds the wait for the
	// join message.
	KeepaliveTimeout time.Duration
	// DispatchWaitTimeout is how long a dispatch waits for a member with
	// matching tags to join before 503 NO_COMPUTE_MEMBER_FOR_TAG; 0 fails
	// at once. ConfigFrom sets SVC_DISPATCH_WAIT_TIMEOUT only in cluster
	// mode: a single node answers at once (docs/decisions/0019-compute-members.md).
	DispatchWaitTimeout time.Duration
	// MaxRecvMsgBytes caps an inbound message; 0 means 16 MiB.
	MaxRecvMsgBytes int
	// TLS, when set, serves TLS (SVC_TLS_CERT_FILE/SVC_TLS_KEY_FILE).
	TLS *tls.Config
	// ServerOptions are added to the gRPC server's (telemetry's
	// interceptors when SVC_OTEL_ENABLED is set).
	ServerOptions []grpc.ServerOption
	// Cluster and Forward turn on dispatch across nodes (cluster mode
	// only): a dispatch that finds no local member looks in Cluster for a
	// live peer whose tags for the tenant match and forwards the call to
	// it with Forward. Without them single-node dispatch is unchanged.
	Cluster cluster.Directory
	Forward Forwarder
}

// CRUD is the part of the CloudEventsService beside startStreaming: the
// entity, search and model RPCs (*crud.Server). It is handed to Start, not
// to New: the domain services behind it dispatch to this server, so they
// are built after it and before it listens.
type CRUD interface {
	EntityManage(context.Context, *ce.CloudEvent) (*ce.CloudEvent, error)
	EntitySearch(context.Context, *ce.CloudEvent) (*ce.CloudEvent, error)
	EntityModelManage(context.Context, *ce.CloudEvent) (*ce.CloudEvent, error)
	EntityManageCollection(*ce.CloudEvent, grpc.ServerStreamingServer[ce.CloudEvent]) error
	EntitySearchCollection(*ce.CloudEvent, grpc.ServerStreamingServer[ce.CloudEvent]) error
}

// Server serves compute members and dispatches calculations to them.
type Server struct {
	cloudapi.UnimplementedCloudEventsServiceServer

	cfg    Config
	verify TokenVerifier
	log    *slog.Logger
	reg    *registry
	grpc   *grpc.Server

	// dir and fwd are set in cluster mode only (Config.Cluster, Forward).
	dir cluster.Directory
	fwd Forwarder
	// tagsMu serialises tag reports (OnTagsChanged).
	tagsMu   sync.Mutex
	tagsFn   func(tenant string, tags []string)
	lastTags map[string][]string

	// crud serves the CRUD RPCs; nil answers them Unimplemented. Set by
	// Start, read-only afterwards.
	crud CRUD
	// stopping is closed by Stop; streams end and waits give up.
	stopping chan struct{}
	stopOnce sync.Once
	// wg tracks every goroutine the server starts (Serve, per-stream
	// receivers and senders) so Stop returns only when all have ended.
	wg sync.WaitGroup
	// testWaiting, set by a test before the server is used, runs when a
	// dispatch finds no member and starts waiting for one.
	testWaiting func()
}

// New builds a server; Start or Serve runs it.
func New(cfg Config, verify TokenVerifier, log *slog.Logger) *Server {
	if cfg.KeepaliveInterval <= 0 {
		cfg.KeepaliveInterval = 10 * time.Second
	}
	if cfg.KeepaliveTimeout <= 0 {
		cfg.KeepaliveTimeout = 30 * time.Second
	}
	if cfg.MaxRecvMsgBytes <= 0 {
		cfg.MaxRecvMsgBytes = wire.DefaultMaxRecvMsgBytes
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, verify: verify, log: log, reg: newRegistry(), stopping: make(chan struct{}),
		lastTags: map[string][]string{}}
	if cfg.Cluster != nil && cfg.Forward != nil {
		s.dir, s.fwd = cfg.Cluster, cfg.Forward
	}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgBytes),
		// Client SDKs ping every 15-30 s, also between calls; the default
		// policy (5 min) would answer them with GOAWAY too_many_pings.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// The server pings a connection idle for 10 s and closes it when
		// the ping is not answered within 30 s (the change feed's stream
		// keep-alive, as cyoda-go designed it): a consumer that vanished
		// without closing its stream is let go. Fixed, not the member
		// settings: tests shrink those to milliseconds.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 10 * time.Second, Timeout: 30 * time.Second}),
		// Stop waits for every handler to return (they all end on
		// s.stopping or their cancelled stream), so no goroutine of a
		// stopped server runs on, and a member stream that was starting
		// cannot call s.wg.Add after Stop's s.wg.Wait
		// (TestStopWaitsForMemberStreams).
		grpc.WaitForHandlers(true),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s.grpc = grpc.NewServer(append(opts, cfg.ServerOptions...)...)
	cloudapi.RegisterCloudEventsServiceServer(s.grpc, s)
	return s
}

// RegisterService adds another service to the server (the change feed's
// EntityChangeService); call it before Start. It makes Server a
// grpc.ServiceRegistrar.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.grpc.RegisterService(desc, impl)
}

// Start serves on lis in a goroutine the server owns, with crud serving
// the CRUD RPCs (nil answers them Unimplemented); Stop ends it.
func (s *Server) Start(lis net.Listener, crud CRUD) {
	s.crud = crud
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.grpc.Serve(lis); err != nil {
			s.log.Error("grpc listener stopped", "error", err)
		}
	}()
}

// Stop ends every member stream, stops the listener and waits for the
// server's goroutines. Pending dispatches fail as disconnected.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stopping) })
	s.grpc.Stop()
	s.wg.Wait()
}

// EntityManage implements the unary entityManage RPC (Start's crud).
func (s *Server) EntityManage(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	if s.crud == nil {
		return s.UnimplementedCloudEventsServiceServer.EntityManage(ctx, ev)
	}
	return s.crud.EntityManage(ctx, ev)
}

// EntitySearch implements the unary entitySearch RPC (Start's crud).
func (s *Server) EntitySearch(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	if s.crud == nil {
		return s.UnimplementedCloudEventsServiceServer.EntitySearch(ctx, ev)
	}
	return s.crud.EntitySearch(ctx, ev)
}

// EntityModelManage implements the unary entityModelManage RPC (Start's crud).
func (s *Server) EntityModelManage(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	if s.crud == nil {
		return s.UnimplementedCloudEventsServiceServer.EntityModelManage(ctx, ev)
	}
	return s.crud.EntityModelManage(ctx, ev)
}

// EntityManageCollection implements the server-streaming
// entityManageCollection RPC (Start's crud).
func (s *Server) EntityManageCollection(ev *ce.CloudEvent, stream grpc.ServerStreamingServer[ce.CloudEvent]) error {
	if s.crud == nil {
		return s.UnimplementedCloudEventsServiceServer.EntityManageCollection(ev, stream)
	}
	return s.crud.EntityManageCollection(ev, stream)
}

// EntitySearchCollection implements the server-streaming
// entitySearchCollection RPC (Start's crud).
func (s *Server) EntitySearchCollection(ev *ce.CloudEvent, stream grpc.ServerStreamingServer[ce.CloudEvent]) error {
	if s.crud == nil {
		return s.UnimplementedCloudEventsServiceServer.EntitySearchCollection(ev, stream)
	}
	return s.crud.EntitySearchCollection(ev, stream)
}

// Members is the number of joined members of tenant.
func (s *Server) Members(tenant string) int { return s.reg.count(tenant) }
