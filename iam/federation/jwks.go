package federation

import (
	"context"
	"crypto/rsa"
	"errors"
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
	return &jwksCache{keys: keys, neg: neg, fetch: fetch, ttl: ttl, negTTL: negTTL}, nil
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
	keys, err := c.refetch(ctx, uri)
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

// refetch fetches uri once for all concurrent callers and caches every key.
func (c *jwksCache) refetch(ctx context.Context, uri string) (map[string]*rsa.PublicKey, error) {
	v, err, _ := c.sf.Do(uri, func() (any, error) {
		c.fetches.Add(1)
		// One caller's cancellation must not fail the others sharing the
		// fetch; the client's own timeouts bound it.
		keys, err := c.fetch(context.WithoutCancel(ctx), uri)
		if err != nil {
			return nil, err
		}
		for kid, pub := range keys {
			c.keys.SetWithTTL(cacheKey(uri, kid), pub, 1, c.ttl)
			c.neg.Del(cacheKey(uri, kid))
		}
		c.keys.Wait()
		return keys, nil
	})
	if err != nil {
		return nil, errors.Join(errJWKSUnavailable, err)
	}
	return v.(map[string]*rsa.PublicKey), nil
}
