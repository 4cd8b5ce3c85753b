package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"svc/authcache"
	"svc/cluster"
	"svc/compute"
	"svc/compute/crud"
	"svc/iam"
	"svc/platform/config"
	"svc/platform/opmetrics"
	"svc/platform/telemetry"
)

// newCompute builds the compute server (it dispatches, and listens once
// listenCompute hands it the CRUD services). Members authenticate as HTTP
// clients do: the jwt verification chain in jwt mode, the mock principal
// in mock mode. In cluster mode it forwards dispatches through pr. The
// caller owns the server and stops it after the HTTP drain.
func newCompute(cfg *config.Config, jwt *jwtMode, tel *telemetry.T, ops *opmetrics.Set, pr *peers, cl cluster.Cluster, log *slog.Logger) (*compute.Server, error) {
	ccfg, err := computeConfig(cfg)
	if err != nil {
		return nil, err
	}
	ccfg.ServerOptions = append(ops.GRPCServerOptions(), tel.GRPCServerOptions()...)
	pr.clusterDispatch(&ccfg, cl)
	return compute.New(ccfg, verifier(cfg, jwt, log), log), nil
}

// verifier authenticates compute members and CRUD callers.
func verifier(cfg *config.Config, jwt *jwtMode, log *slog.Logger) compute.TokenVerifier {
	if jwt != nil {
		return &authcache.TokenVerifier{C: jwt.cache, Log: log}
	}
	return compute.MockVerifier{Principal: iam.MockPrincipal(cfg.MockKind, cfg.MockRoles)}
}

// listenCompute serves compute members on SVC_GRPC_PORT at
// SVC_GRPC_BIND_ADDRESS (loopback by default in mock mode), with TLS when
// SVC_TLS_CERT_FILE/KEY_FILE are set, and the CRUD RPCs over svc.
func listenCompute(srv *compute.Server, cfg *config.Config, jwt *jwtMode, log *slog.Logger, svc crud.Services) error {
	lis, err := net.Listen("tcp", net.JoinHostPort(cfg.GRPCListenHost(), fmt.Sprint(cfg.GRPCPort)))
	if err != nil {
		return fmt.Errorf("listening on SVC_GRPC_BIND_ADDRESS/SVC_GRPC_PORT %s:%d: %w",
			config.DescribeHost(cfg.GRPCListenHost()), cfg.GRPCPort, err)
	}
	srv.Start(lis, crud.New(svc, verifier(cfg, jwt, log), log))
	log.Info("compute gRPC listening", "addr", lis.Addr().String())
	return nil
}

// computeConfig reads the compute settings of svc's configuration, loading
// the TLS key pair when SVC_TLS_CERT_FILE and SVC_TLS_KEY_FILE are set.
// SVC_DISPATCH_WAIT_TIMEOUT applies only in cluster mode: a single node
// answers at once (docs/decisions/0019-compute-members.md).
func computeConfig(c *config.Config) (compute.Config, error) {
	cfg := compute.Config{
		KeepaliveInterval: time.Duration(c.KeepaliveInterval) * time.Second,
		KeepaliveTimeout:  time.Duration(c.KeepaliveTimeout) * time.Second,
	}
	if c.ClusterEnabled {
		cfg.DispatchWaitTimeout = c.DispatchWaitTimeout
	}
	if c.TLSCertFile != "" || c.TLSKeyFile != "" {
		pair, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return compute.Config{}, fmt.Errorf("compute: TLS key pair: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	return cfg, nil
}
