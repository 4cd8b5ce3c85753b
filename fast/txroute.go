package fast

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"svc/cluster/peer"
	"svc/platform/apierr"
	"svc/txtoken"
)

// txRouter sends a request carrying X-Tx-Token to the node that owns the
// transaction (docs/decisions/0026-cluster.md): a joined transaction lives in
// its owner's memory, so a callback that reached another node is served
// there, and its write commits with the owner's, all or nothing.
type txRouter struct {
	s       *Server
	self    string
	tokens  *txtoken.Signer
	c       *ClusterDeps
	hc      *fasthttp.Client
	timeout time.Duration
}

// txRoute is the routing middleware; with clustering off it is not in the
// chain at all. It runs before authentication (docs/decisions/0026-cluster.md):
// the owner authenticates the proxied request, which carries its headers
// unchanged.
//   - no token: served here;
//   - expired: 410 TRANSACTION_EXPIRED; malformed or a signature mismatch:
//     401 UNAUTHORIZED;
//   - owned by this node: served here (txJoin joins it);
//   - owner not live: 503 TRANSACTION_NODE_UNAVAILABLE;
//   - otherwise proxied to the owner's SVC_NODE_ADDR within
//     SVC_PROXY_TIMEOUT; a failed proxy is 503 TRANSACTION_NODE_UNAVAILABLE.
func (s *Server) txRoute(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	c := s.deps.Cluster
	if c == nil || c.Dir == nil || c.Tokens == nil {
		return next
	}
	timeout := c.ProxyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	d := peer.Dialer(c.AllowLoopback)
	tr := &txRouter{s: s, self: c.Dir.Self().ID, tokens: c.Tokens, c: c, timeout: timeout,
		hc: &fasthttp.Client{
			Name:                          "svc-txproxy",
			NoDefaultUserAgentHeader:      true,
			DisableHeaderNamesNormalizing: true,
			DisablePathNormalizing:        true,
			MaxConnsPerHost:               512,
			MaxIdleConnDuration:           90 * time.Second,
			MaxResponseBodySize:           s.maxBody(),
			ReadBufferSize:                MaxHeaderBytes,
			Dial:                          func(addr string) (net.Conn, error) { return d.Dial("tcp", addr) },
			DialDualStack:                 true,
		}}
	return func(ctx *fasthttp.RequestCtx) {
		tok := ctx.Request.Header.Peek(hdrTxToken)
		if len(tok) == 0 {
			next(ctx)
			return
		}
		tr.route(ctx, tok, next)
	}
}

func (tr *txRouter) route(ctx *fasthttp.RequestCtx, tok []byte, next fasthttp.RequestHandler) {
	cl, err := tr.tokens.Verify(string(tok))
	switch {
	case errors.Is(err, txtoken.ErrExpired):
		tr.s.writeProblem(ctx, NewProblem(apierr.TransactionExpired, "transaction token expired"))
		return
	case err != nil:
		tr.s.writeProblem(ctx, NewProblem(apierr.Unauthorized, "invalid transaction token"))
		return
	}
	if cl.Node == tr.self {
		next(ctx)
		return
	}
	owner, ok := tr.c.Dir.Lookup(cl.Node)
	if !ok || owner.HTTPAddr == "" {
		tr.s.writeProblem(ctx, nodeUnavailable(cl.Node, nil))
		return
	}
	tr.proxy(ctx, owner.ID, owner.HTTPAddr)
}

// proxy forwards the request as it came (method, URI, headers, body) and
// answers with the owner's response as it came.
func (tr *txRouter) proxy(ctx *fasthttp.RequestCtx, ownerID, base string) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	ctx.Request.Header.CopyTo(&req.Header)
	if ctx.Request.IsBodyStream() {
		// A streamed body (the NDJSON create, which wholeBody leaves as a
		// stream) is read here in full, up to SVC_HTTP_MAX_BODY_BYTES.
		buf := bodyBufs.Get()
		defer bodyBufs.Put(buf)
		limit := tr.s.maxBody()
		n, err := readAtMost(ctx.RequestBodyStream(), buf, limit)
		switch {
		case err != nil:
			ctx.SetConnectionClose()
			tr.s.writeProblem(ctx, &Problem{Code: apierr.BadRequest, Message: "failed to read the request body"})
			return
		case n > limit:
			ctx.SetConnectionClose()
			tr.s.writeProblem(ctx, tr.s.bodyTooLarge())
			return
		}
		req.SetBody(buf.B)
	} else {
		req.SetBody(ctx.Request.Body())
	}
	req.SetRequestURI(strings.TrimRight(base, "/") + string(ctx.RequestURI()))
	// Keep the client's Host header: the owner serves the same API.
	req.UseHostHeader = true
	if err := tr.hc.DoTimeout(req, resp, tr.timeout); err != nil {
		tr.s.writeProblem(ctx, nodeUnavailable(ownerID, err))
		return
	}
	resp.Header.CopyTo(&ctx.Response.Header)
	ctx.Response.SetBody(resp.Body())
}

func nodeUnavailable(node string, cause error) *Problem {
	return &Problem{Code: apierr.TransactionNodeUnavailable,
		Message:  "the node that owns the transaction is not reachable",
		Props:    []Prop{StrProp("nodeId", node)},
		Internal: cause}
}
