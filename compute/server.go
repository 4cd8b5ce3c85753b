// Package compute is svc's gRPC listener for compute members: the
// CloudEventsService with its startStreaming protocol (join, greet,
// keep-alive, calculation requests and responses), the member registry with
// tag routing, and the remote workflow.ProcessorDispatcher built on it.
package compute

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"svc/cluster"
	"svc/compute/pb/cloudapi"
	"svc/compute/wire"
	"svc/platform/config"
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
}

// ConfigFrom reads the compute settings of svc's configuration, loading
// the TLS key pair when SVC_TLS_CERT_FILE and SVC_TLS_KEY_FILE are set.
func ConfigFrom(c *config.Config) (Config, error) {
	cfg := Config{
		KeepaliveInterval: time.Duration(c.KeepaliveInterval) * time.Second,
		KeepaliveTimeout:  time.Duration(c.KeepaliveTimeout) * time.Second,
	}
	if c.ClusterEnabled {
		cfg.DispatchWaitTimeout = c.DispatchWaitTimeout
	}
	if c.TLSCertFile != "" || c.TLSKeyFile != "" {
		pair, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return Config{}, fmt.Errorf("compute: TLS key pair: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	return cfg, nil
}

// Server serves compute members and dispatches calculations to them.
type Server struct {
	cloudapi.UnimplementedCloudEventsServiceServer

	cfg    Config
	verify TokenVerifier
	log    *slog.Logger
	reg    *registry
	grpc   *grpc.Server
	svc    Services // the CRUD RPCs' domain services (SetServices)

	// dir and fwd are set in cluster mode only (SetCluster).
	dir cluster.Directory
	fwd Forwarder
	// tagsMu serialises tag reports (OnTagsChanged).
	tagsMu   sync.Mutex
	tagsFn   func(tenant string, tags []string)
	lastTags map[string][]string

	// stopping is closed by Stop; streams end and waits give up.
	stopping chan struct{}
	stopOnce sync.Once
	// wg tracks every goroutine the server starts (Serve, per-stream
	// receivers and senders) so Stop returns only when all have ended.
	wg sync.WaitGroup
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
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgBytes),
		// Client SDKs ping every 15-30 s, also between calls; the default
		// policy (5 min) would answer them with GOAWAY too_many_pings.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s.grpc = grpc.NewServer(append(opts, cfg.ServerOptions...)...)
	cloudapi.RegisterCloudEventsServiceServer(s.grpc, s)
	return s
}

// Start serves on lis in a goroutine the server owns; Stop ends it.
func (s *Server) Start(lis net.Listener) {
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

// Members is the number of joined members of tenant.
func (s *Server) Members(tenant string) int { return s.reg.count(tenant) }
