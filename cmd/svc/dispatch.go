package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync"

	"google.golang.org/grpc"

	"svc/cluster"
	"svc/cluster/peer"
	"svc/compute"
	"svc/compute/crud"
	"svc/fast"
	"svc/platform/config"
	"svc/txtoken"
)

// txTokens is the signer of transaction routing tokens: in cluster mode
// keyed with SVC_HMAC_SECRET and stamped with SVC_NODE_ID, so any node
// verifies any node's token and finds its owner; on a single node a
// secret of this process alone (docs/decisions/0015-transactions.md).
func txTokens(cfg *config.Config) (*txtoken.Signer, error) {
	if !cfg.ClusterEnabled {
		return txtoken.NewRandom(cfg.NodeID, cfg.TxTokenTTL)
	}
	secret, err := peer.DecodeSecret(cfg.HMACSecret)
	if err != nil {
		return nil, fmt.Errorf("SVC_HMAC_SECRET: %w", err)
	}
	return txtoken.New(secret, cfg.NodeID, cfg.TxTokenTTL), nil
}

// crossNode is compute dispatch across nodes and transaction routing
// (docs/decisions/0026-cluster.md); nil with clustering off, when none
// of it exists.
type crossNode struct {
	cl     cluster.Cluster
	http   *fast.ClusterDeps
	txr    *crud.TxRouter
	client *peer.Client
	// csrv is set by attach, before the listeners serve.
	csrv *compute.Server

	stop chan struct{}
	wg   sync.WaitGroup
}

// newCrossNode builds the internal route (key, guard, client), the HTTP
// transaction router's dependencies and the gRPC one. A node advertising
// a loopback SVC_NODE_ADDR runs a one-machine cluster and may dial
// loopback peers; otherwise loopback peers are refused.
func newCrossNode(cfg *config.Config, cl cluster.Cluster, tokens *txtoken.Signer) (*crossNode, error) {
	if !cfg.ClusterEnabled {
		return nil, nil
	}
	secret, err := peer.DecodeSecret(cfg.HMACSecret)
	if err != nil {
		return nil, fmt.Errorf("SVC_HMAC_SECRET: %w", err)
	}
	key, err := peer.NewKey(secret)
	if err != nil {
		return nil, err
	}
	loop := peer.LoopbackURL(cfg.NodeAddr)
	x := &crossNode{cl: cl, stop: make(chan struct{}),
		client: peer.NewClient(key, peer.ClientOptions{Timeout: cfg.DispatchForwardTimeout, AllowLoopback: loop})}
	mux := peer.NewMux(peer.NewGuard(key))
	mux.Handle(compute.CalloutPath, func(ctx context.Context, body []byte) ([]byte, error) {
		return x.csrv.ServeCallout(ctx, body)
	})
	x.http = &fast.ClusterDeps{Dir: cl, Tokens: tokens, Internal: mux, ProxyTimeout: cfg.ProxyTimeout, AllowLoopback: loop}
	var tlsCfg *tls.Config
	if cfg.TLSCertFile != "" {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	x.txr = crud.NewTxRouter(crud.TxRouterConfig{Dir: cl, Tokens: tokens, GRPCPort: cfg.GRPCPort,
		Timeout: cfg.ProxyTimeout, AllowLoopback: loop, TLS: tlsCfg})
	return x, nil
}

// httpDeps is the HTTP layer's part; nil with clustering off.
func (x *crossNode) httpDeps() *fast.ClusterDeps {
	if x == nil {
		return nil
	}
	return x.http
}

// grpcOptions are the gRPC transaction router's interceptors.
func (x *crossNode) grpcOptions() []grpc.ServerOption {
	if x == nil {
		return nil
	}
	return x.txr.ServerOptions()
}

// attach turns on forwarding in the compute server and spreads its
// members' tags in this node's membership metadata. The tags are
// published by one goroutine, coalescing bursts, so a member's join never
// waits for gossip.
func (x *crossNode) attach(csrv *compute.Server) {
	if x == nil {
		return
	}
	x.csrv = csrv
	csrv.SetCluster(x.cl, func(ctx context.Context, n cluster.Node, path string, body []byte) ([]byte, error) {
		return x.client.Call(ctx, n.HTTPAddr, path, body)
	})
	// One publish up front covers a member that joined between the
	// listener's start and this hook.
	changed := make(chan struct{}, 1)
	changed <- struct{}{}
	csrv.OnTagsChanged(func(string, []string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		for {
			select {
			case <-changed:
				x.cl.SetTags(csrv.Tags())
			case <-x.stop:
				return
			}
		}
	}()
}

// close stops the tag publisher and closes the connections to owners.
func (x *crossNode) close() {
	if x == nil {
		return
	}
	close(x.stop)
	x.wg.Wait()
	x.txr.Close()
}
