package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Handler serves one internal route: the opened request body in, the
// response body (sealed by the caller of the handler) out. An error
// wrapping ErrMalformed (see Malformed) is a payload the route cannot
// read, answered with a sealed 400; any other error is a failure of the
// route itself, answered 500; typed domain failures belong in the
// response body.
type Handler func(ctx context.Context, body []byte) ([]byte, error)

// ErrMalformed marks a call that authenticated but whose payload the
// route cannot read (not its JSON shape, a field out of range). The HTTP
// layer answers it 400, sealed to the request like any answer, and a
// Client returns it (wrapped, with the route's detail) instead of
// ErrUnreachable: the peer was reached and said no.
var ErrMalformed = errors.New("peer: malformed payload")

// Malformed wraps err as a malformed-payload failure of a handler.
func Malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Mux holds the internal routes. Routes are added before the HTTP layer
// mounts them and never after.
type Mux struct {
	guard  *Guard
	routes map[string]Handler
}

// NewMux returns an empty set of routes opened by guard.
func NewMux(guard *Guard) *Mux { return &Mux{guard: guard, routes: map[string]Handler{}} }

// Handle adds a route at path (absolute, at the server's root).
func (m *Mux) Handle(path string, h Handler) { m.routes[path] = h }

// Routes returns the routes by path.
func (m *Mux) Routes() map[string]Handler { return m.routes }

// Guard is the mux's call guard.
func (m *Mux) Guard() *Guard { return m.guard }

// ErrUnreachable wraps every failure to get an authenticated answer from a
// peer: dial, timeout, a refusal, a non-200 status, a response that does
// not open.
var ErrUnreachable = errors.New("peer: call failed")

// Client calls other nodes' internal routes. It is safe for concurrent use.
type Client struct {
	key     *Key
	hc      *fasthttp.Client
	timeout time.Duration
	now     func() time.Time
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Timeout bounds one call (SVC_DISPATCH_FORWARD_TIMEOUT); a context
	// deadline that comes sooner wins.
	Timeout time.Duration
	// AllowLoopback lets the client dial loopback peers (a cluster on one
	// machine); link-local, unspecified and multicast peers are always
	// refused.
	AllowLoopback bool
}

// NewClient returns a client sealing with key.
func NewClient(key *Key, o ClientOptions) *Client {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	d := Dialer(o.AllowLoopback)
	hc := &fasthttp.Client{
		Name:                     "svc-peer",
		NoDefaultUserAgentHeader: true,
		MaxConnsPerHost:          512,
		MaxIdleConnDuration:      90 * time.Second,
		MaxResponseBodySize:      MaxBody + 64,
		ReadBufferSize:           16 << 10,
		Dial: func(addr string) (net.Conn, error) {
			return d.Dial("tcp", addr)
		},
		DialDualStack: true,
	}
	return &Client{key: key, hc: hc, timeout: o.Timeout, now: time.Now}
}

// Call posts plain, sealed, to base (a node's SVC_NODE_ADDR) + path and
// returns the opened response.
func (c *Client) Call(ctx context.Context, base, path string, plain []byte) ([]byte, error) {
	ts := c.now().Unix()
	body := c.key.Seal(fasthttp.MethodPost, path, ts, plain)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(strings.TrimRight(base, "/") + path)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType(ContentType)
	var tsb [20]byte
	req.Header.SetBytesV(HeaderTimestamp, strconv.AppendInt(tsb[:0], ts, 10))
	req.SetBodyRaw(body)
	deadline := c.now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.hc.DoDeadline(req, resp, deadline); err != nil {
		return nil, fmt.Errorf("%w: %s%s: %v", ErrUnreachable, base, path, err)
	}
	if sc := resp.StatusCode(); sc != fasthttp.StatusOK {
		// A sealed 400 is the peer's own refusal of the payload; anything
		// unsealed could come from whoever sits on the path.
		if sc == fasthttp.StatusBadRequest && string(resp.Header.ContentType()) == ContentType {
			if p, err := c.key.OpenResponse(fasthttp.MethodPost, path, ts, Nonce(body), resp.Body()); err == nil {
				var prob struct {
					Detail string `json:"detail"`
				}
				_ = json.Unmarshal(p, &prob)
				return nil, fmt.Errorf("%w: %s%s answered 400: %s", ErrMalformed, base, path, prob.Detail)
			}
		}
		return nil, fmt.Errorf("%w: %s%s answered %d", ErrUnreachable, base, path, sc)
	}
	out, err := c.key.OpenResponse(fasthttp.MethodPost, path, ts, Nonce(body), resp.Body())
	if err != nil {
		return nil, fmt.Errorf("%w: %s%s: the response does not authenticate", ErrUnreachable, base, path)
	}
	return out, nil
}

// ErrAddress is returned (wrapped) when a peer address may not be dialled.
var ErrAddress = errors.New("peer: address refused")

// Dialer is the dialer of every connection to a peer (internal routes,
// the transaction proxy, the gRPC proxy). Peer addresses come from
// membership, so the check runs on the resolved address at connect time:
// link-local (cloud metadata), unspecified and multicast addresses are
// refused, and loopback unless allowLoopback.
func Dialer(allowLoopback bool) *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q", ErrAddress, address)
			}
			if !Allowed(ap.Addr(), allowLoopback) {
				return fmt.Errorf("%w: %s", ErrAddress, ap.Addr())
			}
			return nil
		}}
}

// Allowed reports whether a peer at ip may be dialled.
func Allowed(ip netip.Addr, allowLoopback bool) bool {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalUnicast(),
		ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return false
	case ip.IsLoopback():
		return allowLoopback
	}
	return true
}

// LoopbackURL reports whether base (an http(s) URL) names a loopback
// host: a node advertising itself on loopback runs a one-machine cluster
// and may dial loopback peers.
func LoopbackURL(base string) bool {
	h := base
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}
