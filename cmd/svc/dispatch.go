package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync"

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

// peers is this node's side of the sealed node-to-node route: the key and
// the client that forwards compute dispatches to other nodes; nil with
// clustering off. It is built before the compute server, which forwards
// through it; crossNode, built after, routes other nodes' calls to it.
type peers struct {
	key    *peer.Key
	client *peer.Client
	loop   bool // a one-machine cluster: loopback peers may be dialled
	// txr proxies a gRPC CRUD call carrying another node's transaction
	// token to that node (its interceptors go into the compute server).
	txr *crud.TxRouter
}

func newPeers(cfg *config.Config, cl cluster.Cluster, tokens *txtoken.Signer) (*peers, error) {
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
	var tlsCfg *tls.Config
	if cfg.TLSCertFile != "" {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &peers{key: key, loop: loop,
		client: peer.NewClient(key, peer.ClientOptions{Timeout: cfg.DispatchForwardTimeout, AllowLoopback: loop}),
		txr: crud.NewTxRouter(crud.TxRouterConfig{Dir: cl, Tokens: tokens, GRPCPort: cfg.GRPCPort,
			Timeout: cfg.ProxyTimeout, AllowLoopback: loop, TLS: tlsCfg})}, nil
}

// close closes the connections to transaction owners.
func (p *peers) close() {
	if p != nil {
		p.txr.Close()
	}
}

// forward calls node's internal route (compute.Forwarder).
func (p *peers) forward(ctx context.Context, n cluster.Node, path string, body []byte) ([]byte, error) {
	return p.client.Call(ctx, n.HTTPAddr, path, body)
}

// clusterDispatch sets the compute server's dispatch across nodes and the
// gRPC transaction router's interceptors; with clustering off it leaves
// ccfg single-node.
func (p *peers) clusterDispatch(ccfg *compute.Config, cl cluster.Cluster) {
	if p == nil {
		return
	}
	ccfg.Cluster, ccfg.Forward = cl, p.forward
	ccfg.ServerOptions = append(ccfg.ServerOptions, p.txr.ServerOptions()...)
}

// crossNode is compute dispatch across nodes and transaction routing
// (docs/decisions/0026-cluster.md); nil with clustering off, when none
// of it exists.
type crossNode struct {
	cl   cluster.Cluster
	http *fast.ClusterDeps

	stop chan struct{}
	wg   sync.WaitGroup
}

// newCrossNode builds the internal route serving other nodes' dispatches
// to csrv's members and the HTTP transaction router's dependencies, and
// spreads csrv's members' tags in this node's membership
// metadata. A node advertising a loopback SVC_NODE_ADDR runs a
// one-machine cluster and may dial loopback peers; otherwise loopback
// peers are refused.
func newCrossNode(cfg *config.Config, cl cluster.Cluster, tokens *txtoken.Signer, p *peers, csrv *compute.Server) *crossNode {
	if p == nil {
		return nil
	}
	x := &crossNode{cl: cl, stop: make(chan struct{})}
	mux := peer.NewMux(peer.NewGuard(p.key))
	mux.Handle(compute.CalloutPath, csrv.ServeCallout)
	x.http = &fast.ClusterDeps{Dir: cl, Tokens: tokens, Internal: mux, ProxyTimeout: cfg.ProxyTimeout, AllowLoopback: p.loop}
	x.publishTags(csrv)
	return x
}

// httpDeps is the HTTP layer's part; nil with clustering off.
func (x *crossNode) httpDeps() *fast.ClusterDeps {
	if x == nil {
		return nil
	}
	return x.http
}

// publishTags spreads csrv's members' tags in this node's membership
// metadata. The tags are published by one goroutine, coalescing bursts, so
// a member's join never waits for gossip.
func (x *crossNode) publishTags(csrv *compute.Server) {
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

// close stops the tag publisher.
func (x *crossNode) close() {
	if x == nil {
		return
	}
	close(x.stop)
	x.wg.Wait()
}
