package fast

import (
	"errors"
	"sort"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/cluster"
	"svc/cluster/peer"
	"svc/platform/apierr"
	"svc/txtoken"
)

// ClusterDeps are what the HTTP layer needs in cluster mode
// (SVC_CLUSTER_ENABLED); nil when clustering is off, and then none of it
// is mounted or consulted.
type ClusterDeps struct {
	// Dir is the live view of the cluster.
	Dir cluster.Directory
	// Tokens verifies transaction routing tokens: the signer sharing the
	// cluster secret, so every node verifies every node's tokens.
	Tokens *txtoken.Signer
	// Internal are the authenticated node-to-node routes, mounted at the
	// root outside the context path (docs/decisions/0026-cluster.md).
	Internal *peer.Mux
	// ProxyTimeout bounds a request proxied to the transaction's owner
	// (SVC_PROXY_TIMEOUT).
	ProxyTimeout time.Duration
	// AllowLoopback lets the transaction proxy dial loopback owners (a
	// cluster on one machine).
	AllowLoopback bool
}

// mountInternal mounts the internal routes. Each opens the sealed body
// (peer.Guard: seal, timestamp window, nonce replay cache) before its
// handler runs; anything that does not pass is 403 FORBIDDEN and nothing
// else happens. The answer is sealed to the request.
func (s *Server) mountInternal(r *router.Router) {
	c := s.deps.Cluster
	if c == nil || c.Internal == nil {
		return
	}
	routes := c.Internal.Routes()
	paths := make([]string, 0, len(routes))
	for p := range routes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		r.POST(p, s.instrument(p, s.internalRoute(p, routes[p], c.Internal.Guard())))
	}
}

func (s *Server) internalRoute(path string, h peer.Handler, g *peer.Guard) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ctx.Request.Header.ContentLength() > peer.MaxBody {
			s.refuseInternal(ctx, peer.ErrForbidden)
			return
		}
		body := ctx.Request.Body()
		plain, ts, err := g.Open(fasthttp.MethodPost, path, ctx.Request.Header.ContentType(),
			ctx.Request.Header.Peek(peer.HeaderTimestamp), body)
		if err != nil {
			s.refuseInternal(ctx, err)
			return
		}
		out, err := h(dctx(ctx), plain)
		if errors.Is(err, peer.ErrMalformed) {
			// The caller authenticated: it gets the refusal sealed to its
			// request, so it can tell the peer's answer from a forgery.
			s.writeProblem(ctx, NewProblem(apierr.BadRequest, err.Error()))
			sealed := g.Key().SealResponse(fasthttp.MethodPost, path, ts, peer.Nonce(body), ctx.Response.Body())
			ctx.SetContentType(peer.ContentType)
			ctx.SetBody(sealed)
			return
		}
		if err != nil {
			s.writeProblem(ctx, &Problem{Code: apierr.ServerError, Message: "internal error", Internal: err})
			return
		}
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType(peer.ContentType)
		ctx.SetBody(g.Key().SealResponse(fasthttp.MethodPost, path, ts, peer.Nonce(body), out))
	}
}

// refuseInternal answers a call that did not authenticate: 403 whatever
// the check (the caller learns nothing), 503 when the replay cache is
// full of live nonces.
func (s *Server) refuseInternal(ctx *fasthttp.RequestCtx, err error) {
	s.log.Warn("internal route: call refused", "path", string(ctx.Path()), "remote", ctx.RemoteIP().String(), "error", err)
	if errors.Is(err, peer.ErrReplayFull) {
		s.writeProblem(ctx, &Problem{Code: apierr.ServiceUnavailable, Message: "too many internal calls; retry", Retryable: true})
		return
	}
	s.writeProblem(ctx, NewProblem(apierr.Forbidden, "forbidden"))
}
