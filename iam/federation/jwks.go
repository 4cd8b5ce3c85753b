package federation

import (
	"context"
	"crypto/rsa"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"golang.org/x/sync/singleflight"
)

var (
	errUnknownKid       = errors.New("federation: kid not in the provider's JWKS")
	errJWKSUnavailable  = errors.New("federation: provider JWKS unavailable")
	defaultJWKSTTL      = 5 * time.Minute
	defaultNegativeTTL  = 2 * time.Second
	jwksCacheMaxEntries = int64(1 << 14)
)

// jwksCache holds provider keys by (jwks_uri, kid). Keying by the source
// URL, not the kid alone, keeps one provider's keys from answering for
// another's tokens. An unknown kid is remembered for a few seconds so a
// flood of made-up kids cannot turn into a flood of outbound fetches, and
// concurrent misses on one URL share a single fetch.
type jwksCache struct {
	keys    *ristretto.Cache[string, *rsa.PublicKey]
	neg     *ristretto.Cache[string, bool]
	sf      singleflight.Group
	fetch   func(ctx context.Context, uri string) (map[string]*rsa.PublicKey, error)
	ttl     time.Duration
	negTTL  time.Duration
	fetches atomic.Int64

	// Refetches triggered by unknown kids are rate limited per URL (a
	// burst, then one per second): the negative cache is per kid, so
	// without this a stream of made-up kids would drive one outbound
	// fetch each. A rotation right after a fetch still fits the burst.
	limitMu sync.Mutex
	limits  map[string]*bucket

	// kids are the kids of each URL's last successful fetch, so a refetch
	// can drop keys the provider no longer publishes (guarded by kidsMu).
	kidsMu sync.Mutex
	kids   map[string][]string
}

type bucket struct {
	tokens float64
	last   time.Time
}

const (
	refetchBurst = 5
	refetchRate  = 1.0 // per second
)

// allowRefetch takes a token from uri's bucket.
func (c *jwksCache) allowRefetch(uri string) bool {
	c.limitMu.Lock()
	defer c.limitMu.Unlock()
	now := time.Now()
	b := c.limits[uri]
	if b == nil {
		if len(c.limits) > 4096 {
			clear(c.limits) // bounded memory; a reset only grants fresh bursts
		}
		b = &bucket{tokens: refetchBurst, last: now}
		c.limits[uri] = b
	}
	b.tokens = min(refetchBurst, b.tokens+now.Sub(b.last).Seconds()*refetchRate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func newJWKSCache(ttl, negTTL time.Duration, fetch func(context.Context, string) (map[string]*rsa.PublicKey, error)) (*jwksCache, error) {
	if ttl <= 0 {
		ttl = defaultJWKSTTL
	}
	if negTTL <= 0 {
		negTTL = defaultNegativeTTL
	}
	mk := func() *ristretto.Config[string, *rsa.PublicKey] {
		return &ristretto.Config[string, *rsa.PublicKey]{NumCounters: 10 * jwksCacheMaxEntries, MaxCost: jwksCacheMaxEntries, BufferItems: 64}
	}
	keys, err := ristretto.NewCache(mk())
	if err != nil {
		return nil, err
	}
	neg, err := ristretto.NewCache(&ristretto.Config[string, bool]{NumCounters: 10 * jwksCacheMaxEntries, MaxCost: jwksCacheMaxEntries, BufferItems: 64})
	if err != nil {
		keys.Close()
		return nil, err
	}
	return &jwksCache{keys: keys, neg: neg, fetch: fetch, ttl: ttl, negTTL: negTTL, limits: map[string]*bucket{}, kids: map[string][]string{}}, nil
}

func (c *jwksCache) close() {
	c.keys.Close()
	c.neg.Close()
}

func cacheKey(uri, kid string) string { return uri + "\x00" + kid }

// lookup returns the key for kid at uri: cached, negatively cached
// (errUnknownKid), or after one shared refetch. A failed fetch is
// errJWKSUnavailable: stale keys are never served past their TTL.
func (c *jwksCache) lookup(ctx context.Context, uri, kid string) (*rsa.PublicKey, error) {
	k := cacheKey(uri, kid)
	if pub, ok := c.keys.Get(k); ok {
		return pub, nil
	}
	if _, ok := c.neg.Get(k); ok {
		return nil, errUnknownKid
	}
	keys, err := c.refetchLimited(ctx, uri)
	if errors.Is(err, errRefetchLimited) {
		return nil, errUnknownKid
	}
	if err != nil {
		return nil, err
	}
	if pub := keys[kid]; pub != nil {
		return pub, nil
	}
	c.neg.SetWithTTL(k, true, 1, c.negTTL)
	c.neg.Wait()
	return nil, errUnknownKid
}

var errRefetchLimited = errors.New("federation: JWKS refetch rate limited")

// drop forgets every cached key of uri, so the next lookup fetches what
// the provider publishes now. Invalidation calls it: a provider trusted
// again must not answer from keys it may have stopped publishing while it
// was out (docs/decisions/0008-oidc-providers.md: invalidation drops the provider's cached keys).
func (c *jwksCache) drop(uri string) {
	c.kidsMu.Lock()
	defer c.kidsMu.Unlock()
	for _, kid := range c.kids[uri] {
		c.keys.Del(cacheKey(uri, kid))
	}
	delete(c.kids, uri)
}

// refetch fetches uri once for all concurrent callers and caches every key.
func (c *jwksCache) refetch(ctx context.Context, uri string) (map[string]*rsa.PublicKey, error) {
	return c.doFetch(ctx, uri, "force\x00"+uri, false)
}

// refetchLimited is refetch under the per-URL rate limit; callers sharing
// one flight share one token.
func (c *jwksCache) refetchLimited(ctx context.Context, uri string) (map[string]*rsa.PublicKey, error) {
	return c.doFetch(ctx, uri, uri, true)
}

func (c *jwksCache) doFetch(ctx context.Context, uri, flight string, limited bool) (map[string]*rsa.PublicKey, error) {
	v, err, _ := c.sf.Do(flight, func() (any, error) {
		if limited && !c.allowRefetch(uri) {
			return nil, errRefetchLimited
		}
		c.fetches.Add(1)
		// One caller's cancellation must not fail the others sharing the
		// fetch; the client's own timeouts bound it.
		keys, err := c.fetch(context.WithoutCancel(ctx), uri)
		if err != nil {
			return nil, err
		}
		fresh := make([]string, 0, len(keys))
		for kid, pub := range keys {
			c.keys.SetWithTTL(cacheKey(uri, kid), pub, 1, c.ttl)
			c.neg.Del(cacheKey(uri, kid))
			fresh = append(fresh, kid)
		}
		c.kidsMu.Lock()
		for _, old := range c.kids[uri] {
			if keys[old] == nil {
				c.keys.Del(cacheKey(uri, old))
			}
		}
		if len(c.kids) > 4096 {
			clear(c.kids)
		}
		c.kids[uri] = fresh
		c.kidsMu.Unlock()
		c.keys.Wait()
		return keys, nil
	})
	if errors.Is(err, errRefetchLimited) {
		return nil, err
	}
	if err != nil {
		return nil, errors.Join(errJWKSUnavailable, err)
	}
	return v.(map[string]*rsa.PublicKey), nil
}
