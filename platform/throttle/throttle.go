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

// trust is when a pair last authenticated, and the start its queue entry
// carries (an entry with another start is a stale one left by a delete).
type trust struct{ at, queued time.Time }

// table is one map of counters with the order their windows started in,
// so expired counters are found from the queue's front without scanning
// the map (the sweep holds the Limiter's mutex; a scan of MaxKeys entries
// per fresh key made a flood of fresh keys quadratic).
type table struct {
	m     map[string]*counter
	queue expiries[string]
}

// expiries is a FIFO of (key, start) in the order the keys were added to
// their map, at most one live entry per key. When an entry's window has
// ended, expire decides from the key's state now: delete it (its start is
// the entry's), requeue it with its newer start (it began a new window
// since), or nothing (the entry is stale: the key is gone or has a newer
// entry). So the queue stays about the size of its map.
type expiries[K comparable] struct {
	items []expiry[K]
	head  int
}

type expiry[K comparable] struct {
	key   K
	start time.Time
}

func (q *expiries[K]) push(k K, start time.Time) {
	q.items = append(q.items, expiry[K]{k, start})
}

// popExpired takes each front entry whose window has ended at now, stopping
// at the first that has not, and requeues the keys expire asks for. Callers
// pass roughly increasing times; an entry a little out of order only waits
// for the ones before it.
func (q *expiries[K]) popExpired(now time.Time, window time.Duration, expire func(k K, start time.Time) (requeue time.Time, ok bool)) {
	for q.head < len(q.items) {
		e := q.items[q.head]
		if now.Sub(e.start) < window {
			break
		}
		q.items[q.head] = expiry[K]{}
		q.head++
		if at, ok := expire(e.key, e.start); ok {
			q.push(e.key, at)
		}
	}
	// Reuse the slice once the popped part outweighs the rest.
	if q.head > 64 && q.head*2 >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// Limiter counts failures. It is safe for concurrent use.
type Limiter struct {
	lim Limits

	mu      sync.Mutex
	clients table
	addrs   table
	// trusted: (client, address) pairs that authenticated within the
	// window; they pass the limits of both tables until they fail.
	trusted      map[pair]trust
	trustedQueue expiries[pair]
	overflow     [2]counter // clients, addresses
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
	return &Limiter{lim: l, clients: table{m: map[string]*counter{}}, addrs: table{m: map[string]*counter{}}, trusted: map[pair]trust{}}
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
			if now.Sub(t.at) < l.lim.Window {
				return 0, true
			}
			delete(l.trusted, pair{client, addr})
		}
	}
	var wait time.Duration
	if l.lim.PerAddress > 0 {
		wait = max(wait, l.blocked(l.addrs.m, &l.overflow[1], addr, l.lim.PerAddress, now))
	}
	if l.lim.PerClient > 0 && client != "" {
		wait = max(wait, l.blocked(l.clients.m, &l.overflow[0], client, l.lim.PerClient, now))
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
			l.count(&l.clients, &l.overflow[0], client, now)
		}
	}
	if l.lim.PerAddress > 0 {
		l.count(&l.addrs, &l.overflow[1], addr, now)
	}
}

func (l *Limiter) count(t *table, over *counter, key string, now time.Time) {
	l.sweep(t, now)
	c, ok := t.m[key]
	if !ok {
		if len(t.m) >= l.lim.MaxKeys {
			c = over
		} else {
			c = &counter{start: now}
			t.m[key] = c
			t.queue.push(key, now)
		}
	}
	if now.Sub(c.start) >= l.lim.Window {
		c.n, c.start = 0, now
	}
	c.n++
}

// sweep drops counters whose window has ended, oldest first from the
// table's queue: each call does work for the windows that ended since the
// last, never a scan of the map. A counter past its window counts as no
// counter (blocked and count start over), so dropping it early or late
// changes no answer.
func (l *Limiter) sweep(t *table, now time.Time) {
	t.queue.popExpired(now, l.lim.Window, func(k string, start time.Time) (time.Time, bool) {
		c := t.m[k] // counters leave the map only here: every key has its entry
		if c.start.Equal(start) {
			delete(t.m, k)
			return time.Time{}, false
		}
		return c.start, true
	})
}

// Succeed records that client authenticated from addr: the pair is trusted
// for one window.
func (l *Limiter) Succeed(client, addr string, now time.Time) {
	if l == nil || client == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trustedQueue.popExpired(now, l.lim.Window, func(k pair, start time.Time) (time.Time, bool) {
		t, ok := l.trusted[k]
		switch {
		case !ok || !t.queued.Equal(start):
			return time.Time{}, false // stale: Allow or Fail deleted the pair
		case t.at.Equal(start):
			delete(l.trusted, k)
			return time.Time{}, false
		}
		t.queued = t.at
		l.trusted[k] = t
		return t.at, true
	})
	p := pair{client, addr}
	t, ok := l.trusted[p]
	if !ok {
		if len(l.trusted) >= l.lim.MaxKeys {
			return
		}
		t.queued = now
		l.trustedQueue.push(p, now)
	}
	t.at = now
	l.trusted[p] = t
}
