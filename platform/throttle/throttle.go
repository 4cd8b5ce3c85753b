// Package throttle limits failed client authentications at the OAuth
// endpoints, per claimed client id and per source address, so a secret
// cannot be guessed at line rate. Only failures count: a client that
// authenticates is never slowed by its own traffic, and an address that
// proved a client's secret keeps working for that client even while
// someone elsewhere hammers the same client id.
package throttle

import (
	"net"
	"sync"
	"time"
)

// Limits configure a Limiter. A zero Max disables that limit.
type Limits struct {
	PerClient  int           // failures per client id per Window
	PerAddress int           // failures per source address per Window
	Window     time.Duration // fixed window, started by the first failure
	// MaxKeys bounds each table; keys beyond it share one overflow
	// counter, so a flood of fresh ids or addresses is throttled as one.
	MaxKeys int
}

type counter struct {
	n     int
	start time.Time
}

type pair struct{ client, addr string }

// Limiter counts failures. It is safe for concurrent use.
type Limiter struct {
	lim Limits

	mu      sync.Mutex
	clients map[string]*counter
	addrs   map[string]*counter
	// trusted: (client, address) pairs that authenticated within the
	// window; they pass the limits of both tables until they fail.
	trusted  map[pair]time.Time
	overflow [2]counter // clients, addresses
}

// New returns a Limiter; nil when both limits are off (every method of a
// nil Limiter allows everything).
func New(l Limits) *Limiter {
	if l.PerClient <= 0 && l.PerAddress <= 0 {
		return nil
	}
	if l.Window <= 0 {
		l.Window = time.Minute
	}
	if l.MaxKeys <= 0 {
		l.MaxKeys = 1 << 16
	}
	return &Limiter{lim: l, clients: map[string]*counter{}, addrs: map[string]*counter{}, trusted: map[pair]time.Time{}}
}

// AddressKey is the address a limit applies to: the IP itself for IPv4,
// the /64 for IPv6 (one host usually holds a whole /64).
func AddressKey(ip net.IP) string {
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	if len(ip) == net.IPv6len {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// Allow reports whether a client authentication for client (as claimed;
// empty when none could be read) from addr may proceed now; when not, it
// returns how long to wait.
func (l *Limiter) Allow(client, addr string, now time.Time) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if client != "" {
		if t, ok := l.trusted[pair{client, addr}]; ok {
			if now.Sub(t) < l.lim.Window {
				return 0, true
			}
			delete(l.trusted, pair{client, addr})
		}
	}
	var wait time.Duration
	if l.lim.PerAddress > 0 {
		wait = max(wait, l.blocked(l.addrs, &l.overflow[1], addr, l.lim.PerAddress, now))
	}
	if l.lim.PerClient > 0 && client != "" {
		wait = max(wait, l.blocked(l.clients, &l.overflow[0], client, l.lim.PerClient, now))
	}
	return wait, wait == 0
}

// blocked is how long key stays over its limit (0: it is not).
func (l *Limiter) blocked(m map[string]*counter, over *counter, key string, limit int, now time.Time) time.Duration {
	c, ok := m[key]
	if !ok {
		c = over
	}
	end := c.start.Add(l.lim.Window)
	if c.n < limit || !now.Before(end) {
		return 0
	}
	return end.Sub(now)
}

// Fail records a failed authentication. It also ends any trust the pair
// had, so a guesser sharing an address with a valid client is limited.
func (l *Limiter) Fail(client, addr string, now time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if client != "" {
		delete(l.trusted, pair{client, addr})
		if l.lim.PerClient > 0 {
			l.count(l.clients, &l.overflow[0], client, now)
		}
	}
	if l.lim.PerAddress > 0 {
		l.count(l.addrs, &l.overflow[1], addr, now)
	}
}

func (l *Limiter) count(m map[string]*counter, over *counter, key string, now time.Time) {
	c, ok := m[key]
	if !ok {
		if len(m) >= l.lim.MaxKeys {
			l.sweep(m, now)
		}
		if len(m) >= l.lim.MaxKeys {
			c = over
		} else {
			c = &counter{}
			m[key] = c
		}
	}
	if now.Sub(c.start) >= l.lim.Window {
		c.n, c.start = 0, now
	}
	c.n++
}

// sweep drops counters whose window has ended.
func (l *Limiter) sweep(m map[string]*counter, now time.Time) {
	for k, c := range m {
		if now.Sub(c.start) >= l.lim.Window {
			delete(m, k)
		}
	}
}

// Succeed records that client authenticated from addr: the pair is trusted
// for one window.
func (l *Limiter) Succeed(client, addr string, now time.Time) {
	if l == nil || client == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := pair{client, addr}
	if _, ok := l.trusted[p]; !ok && len(l.trusted) >= l.lim.MaxKeys {
		for k, t := range l.trusted {
			if now.Sub(t) >= l.lim.Window {
				delete(l.trusted, k)
			}
		}
		if len(l.trusted) >= l.lim.MaxKeys {
			return
		}
	}
	l.trusted[p] = now
}
