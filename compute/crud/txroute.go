package crud

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"svc/cluster"
	"svc/cluster/peer"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/platform/apierr"
	"svc/txtoken"
)

// TxRouter is the gRPC side of transaction routing
// (docs/decisions/0026-cluster.md): a CRUD call carrying tx-token metadata
// for a transaction another node owns is proxied to that node's gRPC
// listener, where it joins the transaction. Only the four entity RPCs
// honour tx-token, so only they are routed. A token that does not verify
// is left to the local handler, which answers it in the request type's
// failure shape (TRANSACTION_EXPIRED, UNAUTHORIZED) as a single node
// does; an owner that is not live is codes.Unavailable
// "TRANSACTION_NODE_UNAVAILABLE: …".
type TxRouter struct {
	dir     cluster.Directory
	tokens  *txtoken.Signer
	self    string
	port    string
	timeout time.Duration
	opts    []grpc.DialOption

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// TxRouterConfig configures a TxRouter.
type TxRouterConfig struct {
	Dir    cluster.Directory
	Tokens *txtoken.Signer
	// GRPCPort is this node's gRPC port: an owner that advertises no gRPC
	// address is reached at its HTTP host on this port.
	GRPCPort int
	// Timeout bounds a proxied call (SVC_PROXY_TIMEOUT).
	Timeout time.Duration
	// AllowLoopback lets the proxy dial loopback owners.
	AllowLoopback bool
	// TLS, when set, dials owners with TLS (the nodes serve gRPC with TLS).
	TLS *tls.Config
}

// NewTxRouter returns a router; ServerOptions installs it.
func NewTxRouter(c TxRouterConfig) *TxRouter {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	d := peer.Dialer(c.AllowLoopback)
	creds := insecure.NewCredentials()
	if c.TLS != nil {
		creds = credentials.NewTLS(c.TLS)
	}
	return &TxRouter{dir: c.Dir, tokens: c.Tokens, self: c.Dir.Self().ID, port: strconv.Itoa(c.GRPCPort),
		timeout: c.Timeout, conns: map[string]*grpc.ClientConn{},
		opts: []grpc.DialOption{grpc.WithTransportCredentials(creds),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				return d.DialContext(ctx, "tcp", addr)
			})}}
}

// ServerOptions are the interceptors to add to the gRPC server.
func (r *TxRouter) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(r.unary), grpc.ChainStreamInterceptor(r.stream)}
}

// Close closes the connections to owners.
func (r *TxRouter) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.conns {
		c.Close()
		delete(r.conns, k)
	}
}

func routed(method string) bool {
	switch method {
	case cloudapi.CloudEventsService_EntityManage_FullMethodName, cloudapi.CloudEventsService_EntitySearch_FullMethodName,
		cloudapi.CloudEventsService_EntityManageCollection_FullMethodName, cloudapi.CloudEventsService_EntitySearchCollection_FullMethodName:
		return true
	}
	return false
}

// owner returns the connection to the owner of ctx's transaction, nil
// when the call is served here.
func (r *TxRouter) owner(ctx context.Context, method string) (*grpc.ClientConn, error) {
	if !routed(method) {
		return nil, nil
	}
	tok := txToken(ctx)
	if tok == "" {
		return nil, nil
	}
	c, err := r.tokens.Verify(tok)
	if err != nil || c.Node == r.self {
		return nil, nil
	}
	n, ok := r.dir.Lookup(c.Node)
	if !ok {
		return nil, grpcError(apierr.TransactionNodeUnavailable, "node %s, which owns the transaction, is not live", c.Node)
	}
	addr := n.GRPCAddr
	if addr == "" {
		host := n.HTTPAddr
		if i := strings.Index(host, "://"); i >= 0 {
			host = host[i+3:]
		}
		host = strings.TrimRight(host, "/")
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		addr = net.JoinHostPort(strings.Trim(host, "[]"), r.port)
	}
	return r.conn(addr)
}

func (r *TxRouter) conn(addr string) (*grpc.ClientConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.conns[addr]; c != nil {
		return c, nil
	}
	c, err := grpc.NewClient(addr, r.opts...)
	if err != nil {
		return nil, grpcError(apierr.TransactionNodeUnavailable, "%v", err)
	}
	r.conns[addr] = c
	return c, nil
}

// outgoing is the incoming metadata, minus what the transport sets.
func outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for k, v := range md {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") || k == "content-type" || k == "user-agent" || k == "te" {
			continue
		}
		out[k] = v
	}
	return metadata.NewOutgoingContext(ctx, out)
}

// unavailable turns a transport failure to the owner into
// TRANSACTION_NODE_UNAVAILABLE; the owner's own statuses pass through.
func unavailable(err error) error {
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unavailable && s.Code() != codes.DeadlineExceeded {
		return err
	}
	return grpcError(apierr.TransactionNodeUnavailable, "%v", err)
}

// grpcError is a gRPC failure carrying a catalogue code: the code's gRPC
// status, the code as the message prefix (as the HTTP detail has it).
func grpcError(code apierr.Code, format string, a ...any) error {
	return status.Errorf(code.GRPCStatus(), "%s: %s", code, fmt.Sprintf(format, a...))
}

func (r *TxRouter) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	cc, err := r.owner(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if cc == nil {
		return handler(ctx, req)
	}
	ctx, cancel := context.WithTimeout(outgoing(ctx), r.timeout)
	defer cancel()
	out := new(ce.CloudEvent)
	if err := cc.Invoke(ctx, info.FullMethod, req, out); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

func (r *TxRouter) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	cc, err := r.owner(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if cc == nil {
		return handler(srv, ss)
	}
	in := new(ce.CloudEvent)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(outgoing(ss.Context()), r.timeout)
	defer cancel()
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, info.FullMethod)
	if err != nil {
		return unavailable(err)
	}
	if err := cs.SendMsg(in); err != nil {
		return unavailable(err)
	}
	if err := cs.CloseSend(); err != nil {
		return unavailable(err)
	}
	for {
		out := new(ce.CloudEvent)
		if err := cs.RecvMsg(out); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return unavailable(err)
		}
		if err := ss.SendMsg(out); err != nil {
			return fmt.Errorf("relaying the owner's stream: %w", err)
		}
	}
}
