// Package netguard is the SSRF guard of svc's outbound fetches (OIDC
// discovery and JWKS). The check runs in the dialer's Control hook, on the
// address the socket is about to connect to, so it holds on every connection
// including ones made after a DNS answer changed (rebinding) and ones to a
// jwks_uri nobody validated at registration.
package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrBlocked is returned (wrapped) when a destination is in a blocked range.
var ErrBlocked = errors.New("netguard: destination address is blocked")

// The timeout classes of a guarded fetch, one per Options timeout, so a
// caller can say which stage ran out (SVC_OIDC_CONNECT_TIMEOUT_MS,
// SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS, SVC_OIDC_SOCKET_TIMEOUT_MS)
// without quoting transport text.
var (
	// ErrConnectTimeout: the TCP connect or TLS handshake took longer
	// than ConnectTimeout.
	ErrConnectTimeout = errors.New("netguard: connect timed out")
	// ErrPoolTimeout: every pooled connection stayed busy for
	// PoolTimeout.
	ErrPoolTimeout = errors.New("netguard: timed out waiting for a pooled connection")
	// ErrReadTimeout: the server sent no response headers within
	// ReadTimeout.
	ErrReadTimeout = errors.New("netguard: timed out awaiting the response")
)

// defaultMaxConns bounds a client's fetches in flight when Options.MaxConns
// is unset.
const defaultMaxConns = 16

// blocked are the ranges no outbound fetch may reach: loopback, private
// (RFC 1918, IPv6 ULA), link-local (incl. cloud metadata 169.254.169.254),
// unspecified/"this network", carrier-grade NAT, multicast and broadcast.
// IPv6 forms that carry an IPv4 address are not listed here: Blocked judges
// them by the IPv4 address they carry (see embeddedV4).
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// The IPv6 prefixes whose addresses carry an IPv4 address, each reached
// through something that forwards to that IPv4 address (a dual-stack host,
// a 6to4 or Teredo relay, a NAT64 translator).
var (
	v4Compatible = netip.MustParsePrefix("::/96")           // RFC 4291 2.5.5.1 (deprecated)
	v4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 (SIIT)
	sixToFour    = netip.MustParsePrefix("2002::/16")       // RFC 3056: bits 16-47
	teredo       = netip.MustParsePrefix("2001::/32")       // RFC 4380: server bits 32-63, client ^bits 96-127
	nat64WKP     = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: bits 96-127
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")  // RFC 8215: the operator picks the length
)

// embeddedV4 returns every IPv4 address an IPv6 address may carry, in the
// forms of docs/decisions/0008-oidc-providers.md. IPv4-mapped
// addresses are unmapped by the caller. The local-use NAT64 prefix leaves
// the embedding length (RFC 6052: /48, /56, /64 or /96) to the operator,
// which the address does not say, so each reading is returned and the
// address is refused if any of them is.
func embeddedV4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(a, b2, c, d byte) netip.Addr { return netip.AddrFrom4([4]byte{a, b2, c, d}) }
	switch {
	case v4Compatible.Contains(ip), v4Translated.Contains(ip), nat64WKP.Contains(ip):
		return []netip.Addr{v4(b[12], b[13], b[14], b[15])}
	case sixToFour.Contains(ip):
		return []netip.Addr{v4(b[2], b[3], b[4], b[5])}
	case teredo.Contains(ip):
		return []netip.Addr{v4(b[4], b[5], b[6], b[7]), v4(^b[12], ^b[13], ^b[14], ^b[15])}
	case nat64Local.Contains(ip):
		// RFC 6052 2.2: bits 64-71 are skipped for lengths below /96.
		return []netip.Addr{
			v4(b[6], b[7], b[9], b[10]),    // /48
			v4(b[7], b[9], b[10], b[11]),   // /56
			v4(b[9], b[10], b[11], b[12]),  // /64
			v4(b[12], b[13], b[14], b[15]), // /96
		}
	}
	return nil
}

// Blocked reports whether ip may not be dialled. An IPv6 address that
// carries an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
// ::a.b.c.d, IPv4-translated, 6to4, Teredo, NAT64) is judged by the IPv4
// address it carries: blocked when that address is (for Teredo, either of
// its two; for the local-use NAT64 prefix, any reading of it).
//
// Any address with an IPv6 zone (fe80::1%eth0, [::1%25lo] in a URL) is
// blocked: netip.Prefix.Contains never matches a zoned address, so without
// this a zone walked past every range below, and a zone only has meaning for
// scoped, on-link destinations, never for a public identity provider.
func Blocked(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return true
	}
	ip = ip.Unmap()
	for _, p := range blocked {
		if p.Contains(ip) {
			return true
		}
	}
	for _, v4 := range embeddedV4(ip) {
		if Blocked(v4) {
			return true
		}
	}
	return false
}

// Options configure a guarded client.
type Options struct {
	// AllowPrivate lifts the block (SVC_OIDC_ALLOW_PRIVATE_NETWORKS); tests
	// and development only.
	AllowPrivate bool
	// ConnectTimeout bounds the TCP connect and the TLS handshake;
	// PoolTimeout the wait for a connection; ReadTimeout the wait for
	// response headers. The whole request is bounded by their sum.
	ConnectTimeout, PoolTimeout, ReadTimeout time.Duration
	// MaxConns bounds the client's fetches in flight (its pool); a fetch
	// beyond it waits up to PoolTimeout for one to finish. 0 means 16.
	MaxConns int
	// MinTLS is the minimum TLS version (0 = TLS 1.3).
	MinTLS uint16
	// RootCAs replaces the system roots; tests use it to trust an
	// httptest TLS server. Nil means the system pool.
	RootCAs *x509.CertPool
	// Resolver resolves host names; nil is the system resolver. Tests point
	// it at a fake DNS server.
	Resolver *net.Resolver
}

// control refuses blocked destinations. address is the resolved ip:port.
func control(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: unparseable dial address", ErrBlocked)
		}
		if Blocked(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrBlocked, ap.Addr())
		}
		return nil
	}
}

// Dialer returns a net.Dialer whose Control hook enforces the blocklist.
func Dialer(o Options) *net.Dialer {
	return &net.Dialer{Timeout: o.ConnectTimeout, Resolver: o.Resolver, Control: control(o.AllowPrivate)}
}

// NewClient builds the HTTP client for outbound fetches: guarded dialer,
// no proxy (a proxy would dial on our behalf, past the guard), no redirects
// (a redirect is a second destination chosen by the remote side), at most
// MaxConns fetches in flight. A timeout of each stage comes back wrapping
// ErrConnectTimeout, ErrPoolTimeout or ErrReadTimeout.
func NewClient(o Options) *http.Client {
	minTLS := o.MinTLS
	if minTLS == 0 {
		minTLS = tls.VersionTLS13
	}
	maxConns := o.MaxConns
	if maxConns <= 0 {
		maxConns = defaultMaxConns
	}
	d := Dialer(o)
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           connectTimeouts(d.DialContext),
		TLSClientConfig:       &tls.Config{MinVersion: minTLS, RootCAs: o.RootCAs},
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.ReadTimeout,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		MaxConnsPerHost:       maxConns,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: &pooled{next: tr, slots: make(chan struct{}, maxConns), wait: o.PoolTimeout},
		Timeout:   o.ConnectTimeout + o.PoolTimeout + o.ReadTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// connectTimeouts marks a dial that ran out of its own time (not the
// caller's) as ErrConnectTimeout.
func connectTimeouts(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		var ne net.Error
		if err != nil && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w: %w", ErrConnectTimeout, err)
		}
		return c, err
	}
}

// pooled is the client's pool bound: a fetch holds a slot from the request
// until its body is closed, and waits at most wait for one. net/http has no
// pool wait of its own (MaxConnsPerHost waits as long as the request
// lives), which is what SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS bounds.
type pooled struct {
	next  http.RoundTripper
	slots chan struct{}
	wait  time.Duration
}

func (p *pooled) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	select {
	case p.slots <- struct{}{}:
	default:
		var expired <-chan time.Time
		if p.wait > 0 {
			t := time.NewTimer(p.wait)
			defer t.Stop()
			expired = t.C
		}
		select {
		case p.slots <- struct{}{}:
		case <-expired:
			return nil, ErrPoolTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	resp, err := p.next.RoundTrip(r)
	if err != nil {
		<-p.slots
		return nil, classify(ctx, err)
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, release: func() { <-p.slots }}
	return resp, nil
}

// classify names a transport timeout by its stage. The TLS handshake
// timeout of net/http is an unexported type; its text is the only handle.
func classify(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, ErrConnectTimeout) || !errors.As(err, &ne) || !ne.Timeout() {
		return err
	}
	if strings.Contains(err.Error(), "TLS handshake timeout") {
		return fmt.Errorf("%w: %w", ErrConnectTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrReadTimeout, err)
}

// slotBody gives the pool slot back once, when the body is closed.
type slotBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// CheckHost is the registration-time check of a URL host: an IP literal in
// a blocked range, or a name with any blocked answer, is refused. It is a
// courtesy for a clear 400 early; the dial-time check is the boundary.
func CheckHost(ctx context.Context, o Options, host string) error {
	if o.AllowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return fmt.Errorf("%w: %s", ErrBlocked, ip)
		}
		return nil
	}
	r := o.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("netguard: resolving host: %w", err)
	}
	for _, ip := range ips {
		if Blocked(ip) {
			return fmt.Errorf("%w: %s resolves to %s", ErrBlocked, host, ip)
		}
	}
	return nil
}
