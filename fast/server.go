// Package fast is svc's HTTP layer: router, middleware, one handler file per
// API area, the OpenAPI document and the docs page.
package fast

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/audit"
	"svc/authcache"
	"svc/changefeed"
	"svc/entity"
	"svc/help"
	"svc/iam"
	"svc/iam/federation"
	"svc/idempotency"
	"svc/model"
	"svc/platform/config"
	"svc/platform/switches"
	"svc/platform/telemetry"
	"svc/platform/throttle"
	"svc/search"
	"svc/sqlschema"
	"svc/storage"
	"svc/streamdata"
)

// Authenticator resolves the principal of a request. Mock mode returns a
// fixed principal; jwt mode verifies the bearer token. A nil principal with
// a nil error never happens.
type Authenticator interface {
	Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error)
}

// HeaderAuth is the Authenticator of jwt mode: it hands the Authorization
// header to A (*authcache.Authenticator), which knows nothing of HTTP.
type HeaderAuth struct {
	A interface {
		Authenticate(ctx context.Context, authorization []byte, from authcache.Origin) (*iam.Principal, error)
	}
}

// Authenticate implements Authenticator.
func (h HeaderAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	return h.A.Authenticate(ctx, ctx.Request.Header.Peek(fasthttp.HeaderAuthorization), ctx)
}

// MockAuth is the authenticator of SVC_IAM_MODE=mock.
type MockAuth struct{ P *iam.Principal }

func (m MockAuth) Authenticate(*fasthttp.RequestCtx) (*iam.Principal, error) { return m.P, nil }

// Deps are the domain services the HTTP layer serves. Nil members leave
// their areas answering 501.
type Deps struct {
	Auth    Authenticator
	Help    *help.Tree
	Version string
	// Entities is the entity API (/entity/…, stats); nil leaves it at 501.
	Entities *entity.Service
	// Idempotency serves the Idempotency-Key header of entity creates and
	// transitions; nil ignores the header.
	Idempotency *idempotency.Service
	// Audit is the audit trail API (/audit/…); nil leaves it at 501.
	Audit *audit.Service
	// Ready reports whether storage is up, for /readyz.
	Ready func() bool
	// Membership reports cluster membership for /readyz: not ready when
	// ok is false; detail is a line of the response body. Nil is a
	// single node.
	Membership func() (ok bool, detail string)
	// Models stores entity models; nil leaves the model API at 501.
	Models storage.Models
	// Model is the model API (/model/…); nil leaves it at 501.
	Model *model.Service

	Log *slog.Logger
	// IAM are the jwt-mode services (token endpoint, clients, keypairs);
	// nil in mock mode.
	IAM *IAMDeps
	// TrustedKeys and OIDC are the federation services (iam/federation);
	// nil leaves their operations at 501.
	TrustedKeys *federation.TrustedKeys
	OIDC        *federation.Providers
	// Search is direct and async search (/search/…); nil leaves it at 501.
	Search *search.Service
	// Messages stores messages (/message/…); nil leaves them at 501.
	Messages storage.Messages
	// SQLSchema is the SQL Schema API (/sql/schema/…, /sql/query); nil
	// leaves it at 501.
	SQLSchema *sqlschema.Service
	// StreamData is /platform-api/stream-data/…; nil leaves it at 501.
	StreamData *streamdata.Service
	// Telemetry traces requests (SVC_OTEL_ENABLED); nil traces nothing.
	Telemetry *telemetry.T
	// Metrics is the set /metrics writes besides the process and runtime
	// metrics, shared with the storage, dispatch and gRPC histograms
	// (platform/opmetrics); nil gives the server a set of its own.
	Metrics *metrics.Set
	// Pool snapshots the storage connection pool for /metrics; nil (the
	// memory engine) exports no pool metrics.
	Pool func() storage.PoolStats
	// Switches are the node's log level and trace sampler
	// ({ctx}/admin/log-level, {ctx}/admin/trace-sampler); nil leaves those
	// routes at 501. SwitchBus carries scope=cluster changes to the other
	// nodes; nil applies them to this node only.
	Switches  *switches.Switches
	SwitchBus *switches.Cluster
	// Changes and ChangeHub are the change feed (/subscriptions,
	// /changes); nil leaves them at 501.
	Changes   *changefeed.Service
	ChangeHub *changefeed.Hub
	// Cluster is set in cluster mode only (internal routes, transaction
	// routing); nil adds nothing to any request's path.
	Cluster *ClusterDeps
}

// Server is the main API listener plus the admin listener.
type Server struct {
	cfg     *config.Config
	deps    Deps
	log     *slog.Logger
	routes  []Route
	handler fasthttp.RequestHandler
	openapi *openAPIDoc
	metrics *httpMetrics
	reqPfx  [8]byte
	// reqSeq numbers the request ids svc mints. Every request writes it,
	// from either core, so it sits alone on its cache line: beside the
	// fields every request reads (metrics, handler) each write made the
	// other core's next read of them a miss.
	_      [64]byte
	reqSeq atomic.Uint64
	_      [56]byte
	// clientAuthLimit throttles failed client authentications at the
	// OAuth endpoints; nil when both limits are off.
	clientAuthLimit *throttle.Limiter

	api      *fasthttp.Server
	admin    *fasthttp.Server
	draining atomic.Bool
}

// New wires the router and middleware. It does not listen.
func New(cfg *config.Config, deps Deps) (*Server, error) {
	if deps.Auth == nil {
		deps.Auth = MockAuth{P: iam.MockPrincipal(cfg.MockKind, cfg.MockRoles)}
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Help == nil {
		deps.Help = help.Default()
	}
	s := &Server{cfg: cfg, deps: deps, log: deps.Log, metrics: newHTTPMetrics(deps.Metrics)}
	s.metrics.exportPool(deps.Pool)
	s.metrics.exportChanges(deps.Changes)
	initRequestIDPrefix(&s.reqPfx)
	s.clientAuthLimit = newClientAuthLimiter(cfg)
	s.routes = append(apiRoutes(), extensionRoutes()...)
	s.bindHandlers()
	doc, err := cachedOpenAPI(s.routes)
	if err != nil {
		return nil, fmt.Errorf("building the OpenAPI document: %w", err)
	}
	s.openapi = doc

	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = false
	r.SaveMatchedRoutePath = false
	r.NotFound = s.instrument("unmatched", s.notFound)
	r.MethodNotAllowed = s.instrument("unmatched", s.methodNotAllowed)
	r.PanicHandler = s.recovered

	cp := cfg.ContextPath
	var entityGet, entityCreate fasthttp.RequestHandler
	for i := range s.routes {
		rt := &s.routes[i]
		h := rt.Handler
		if h == nil {
			h = s.notImplemented
		}
		chain := s.instrument(rt.Path, s.authorize(rt.Access, s.guardText(rt.Path, rt.OpID, s.txJoin(h))))
		if rt.OpID == opGetOneEntity && rt.Handler != nil {
			entityGet = chain
		}
		if rt.OpID == opCreate && rt.Handler != nil {
			entityCreate = chain
		}
		r.Handle(rt.Method, cp+rt.Path, chain)
	}
	// Aliases outside the wire contract (GET /message/get/{id} is
	// GET /message/{id}, docs/decisions/0022-audit-and-messages.md); they share the operation's handler and access.
	for _, al := range routeAliases {
		for i := range s.routes {
			rt := &s.routes[i]
			if rt.OpID == al.opID && rt.Handler != nil {
				r.Handle(rt.Method, cp+al.path, s.instrument(al.path, s.authorize(rt.Access, s.guardText(al.path, rt.OpID, s.txJoin(rt.Handler)))))
			}
		}
	}
	// Served outside the wire contract (docs/decisions/0027-discovery-and-help.md).
	r.GET("/openapi.json", s.instrument("/openapi.json", s.serveOpenAPI))
	if err := s.routeDocs(r); err != nil {
		return nil, fmt.Errorf("building the /docs page: %w", err)
	}
	r.GET(cp+"/help", s.instrument("/help", s.helpIndex))
	// GET {ctx}/help/{topic} is dispatched before the router (see
	// withHelpFastPath); the route stays registered for 405 handling.
	r.GET(cp+"/help/{topic}", s.instrument("/help/{topic}", s.helpTopic))
	r.GET(cp+"/health", s.instrument("/health", s.health))
	s.mountOAuthExtras(r, cp)
	s.mountInternal(r)

	s.handler = s.withRequestID(s.withCORS(s.wholeBody(s.txRoute(s.withHelpFastPath(s.withEntityFastPaths(entityGet, entityCreate, r.Handler))))))
	return s, nil
}

// Handler is the full middleware chain, for tests and benchmarks that drive
// the server without a socket.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handler }

// Routes returns the API route table.
func (s *Server) Routes() []Route { return s.routes }

func (s *Server) httpServer(h fasthttp.RequestHandler, name string) *fasthttp.Server {
	c := s.cfg
	header := c.HTTPReadHeaderTimeout
	if header == 0 {
		header = c.HTTPReadTimeout
	}
	idle := c.HTTPIdleTimeout
	if idle == 0 {
		idle = c.HTTPReadTimeout
	}
	srv := &fasthttp.Server{
		Handler:                       h,
		Name:                          "svc",
		ReadTimeout:                   header,
		WriteTimeout:                  c.HTTPWriteTimeout,
		IdleTimeout:                   idle,
		MaxRequestBodySize:            s.maxBody(),
		ErrorHandler:                  s.requestError,
		ReadBufferSize:                MaxHeaderBytes,
		NoDefaultServerHeader:         true,
		NoDefaultDate:                 false,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		// Bodies arrive as streams (see wholeBody): the NDJSON create
		// reads one of any length without holding it.
		StreamRequestBody: true,
		// No clock read before every handler: svc never asks a request
		// for ctx.Time(), which then reads the clock on its first call.
		LazyRequestTime: true,
		Logger:          slogPrinter{s.log.With("listener", name)},
	}
	// The whole-request read budget starts once headers are in; fasthttp
	// applies it to the body read.
	if c.HTTPReadTimeout > 0 && c.HTTPReadTimeout != header {
		rt := c.HTTPReadTimeout
		srv.HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{ReadTimeout: rt}
		}
	}
	return srv
}

// MaxHeaderBytes bounds a request's header block. fasthttp's 4 KiB default
// refuses real federated tokens carrying many groups with 431; at 80 KiB a
// hostile 64 KB bearer header still reaches the authenticator and gets the
// uniform 401. The cost is that buffer per keep-alive connection.
const MaxHeaderBytes = 80 << 10

// MaxBodyBytes is the default of SVC_HTTP_MAX_BODY_BYTES, the cap of every
// request body at the socket (413 above it); areas apply tighter limits of
// their own (10 MiB, with 400 or 413 as docs/decisions/0003-http-surface-and-routing.md says).
const MaxBodyBytes = 64 << 20

// Serve listens on the API and admin listeners until ctx is cancelled, then
// drains in-flight requests and returns. ready, when non-nil, receives the
// bound addresses once both listeners accept connections.
func (s *Server) Serve(ctx context.Context, ready func(api, admin net.Addr)) error {
	host := s.cfg.HTTPListenHost()
	apiLn, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(s.cfg.HTTPPort)))
	if err != nil {
		return fmt.Errorf("listening on SVC_HTTP_BIND_ADDRESS/SVC_HTTP_PORT %s:%d: %w", config.DescribeHost(host), s.cfg.HTTPPort, err)
	}
	adminLn, err := net.Listen("tcp", net.JoinHostPort(s.cfg.AdminBindAddress, fmt.Sprint(s.cfg.AdminPort)))
	if err != nil {
		apiLn.Close()
		return fmt.Errorf("listening on admin %s:%d: %w", s.cfg.AdminBindAddress, s.cfg.AdminPort, err)
	}
	return s.ServeListeners(ctx, apiLn, adminLn, ready)
}

// ServeListeners is Serve on listeners the caller bound (tests bind :0).
func (s *Server) ServeListeners(ctx context.Context, apiLn, adminLn net.Listener, ready func(api, admin net.Addr)) error {
	if s.cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		if err != nil {
			apiLn.Close()
			adminLn.Close()
			return fmt.Errorf("loading SVC_TLS_CERT_FILE/SVC_TLS_KEY_FILE: %w", err)
		}
		apiLn = tls.NewListener(apiLn, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	s.api = s.httpServer(s.handler, "api")
	s.admin = s.httpServer(s.adminHandler(), "admin")

	errc := make(chan error, 2)
	go func() { errc <- s.api.Serve(apiLn) }()
	go func() { errc <- s.admin.Serve(adminLn) }()
	if ready != nil {
		ready(apiLn.Addr(), adminLn.Addr())
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// Readiness turns 503 before the drain, and the admin listener stays up
	// until the API has drained (docs/decisions/0028-listeners-and-operations.md).
	s.draining.Store(true)
	drain, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.api.ShutdownWithContext(drain); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("api shutdown", "err", err)
	}
	if err := s.admin.ShutdownWithContext(drain); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("admin shutdown", "err", err)
	}
	return serveErr
}

type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, args ...any) { p.l.Debug(fmt.Sprintf(format, args...)) }

// routeAliases are extra paths for an operation, kept out of the route table
// so the table stays equal to the wire contract.
var routeAliases = []struct{ path, opID string }{
	{"/message/get/{messageId}", "getMessage"},
}
