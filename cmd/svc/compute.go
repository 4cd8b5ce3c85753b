package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"

	"svc/authcache"
	"svc/compute"
	"svc/compute/crud"
	"svc/iam"
	"svc/platform/config"
	"svc/platform/telemetry"
)

// startCompute serves compute members on SVC_GRPC_PORT at
// SVC_GRPC_BIND_ADDRESS (loopback by default in mock mode), with TLS when SVC_TLS_CERT_FILE/KEY_FILE are set.
// Members authenticate as HTTP clients do: the jwt verification chain in
// jwt mode, the mock principal in mock mode. The caller owns the server
// and stops it after the HTTP drain. svc are the domain services behind
// the CRUD RPCs; extra are added to the server's options (the cluster
// transaction router's interceptors).
func startCompute(cfg *config.Config, jwt *jwtMode, tel *telemetry.T, log *slog.Logger, svc crud.Services, extra ...grpc.ServerOption) (*compute.Server, error) {
	ccfg, err := computeConfig(cfg)
	if err != nil {
		return nil, err
	}
	ccfg.ServerOptions = append(tel.GRPCServerOptions(), extra...)
	var verify compute.TokenVerifier = compute.MockVerifier{Principal: iam.MockPrincipal(cfg.MockKind, cfg.MockRoles)}
	if jwt != nil {
		verify = &authcache.TokenVerifier{C: jwt.cache, Log: log}
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(cfg.GRPCListenHost(), fmt.Sprint(cfg.GRPCPort)))
	if err != nil {
		return nil, fmt.Errorf("listening on SVC_GRPC_BIND_ADDRESS/SVC_GRPC_PORT %s:%d: %w",
			config.DescribeHost(cfg.GRPCListenHost()), cfg.GRPCPort, err)
	}
	srv := compute.New(ccfg, verify, log)
	srv.Start(lis, crud.New(svc, verify, log))
	log.Info("compute gRPC listening", "addr", lis.Addr().String())
	return srv, nil
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
