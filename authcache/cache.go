// Package authcache verifies bearer tokens for jwt mode: svc's own keypairs
// first, then the External verifiers (OIDC providers, trusted keys), with
// every verified token cached so a repeated token costs a hash and a map
// probe instead of an RSA verification.
package authcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"

	"svc/iam"
	"svc/storage"
)

// Leeway applies to exp, nbf and iat of every token.
const Leeway = 30 * time.Second

const (
	// maxTokenBytes bounds what is parsed at all; real tokens are a few KB.
	maxTokenBytes = 16 << 10
	// maxKIDBytes: longer kids are never looked up (or negatively cached).
	maxKIDBytes = 128
	// negativeTTL is how long an unknown kid is remembered; short, so a key
	// created on another node is picked up quickly.
	negativeTTL = 5 * time.Second
	// minReloadGap spaces out unknown-kid reloads of the keypair table, so
	// a stream of random kids cannot hammer storage.
	minReloadGap = time.Second
	// staleAfter intervals without a successful reconcile fail closed.
	staleAfter = 10
)

// Errors of verification. Callers answer every one with the same 401.
var (
	ErrUnknownKID = errors.New("authcache: unknown kid")
	ErrStale      = errors.New("authcache: key caches are stale; failing closed")
	errTooLarge   = errors.New("authcache: token too large")
	errNoSubject  = errors.New("authcache: token binds no principal")
)

// Reconciler is implemented by an External whose caches are re-read from
// storage by the reconcile loop.
type Reconciler interface {
	Reconcile(ctx context.Context) error
}

// Options configure a Cache.
type Options struct {
	Issuer   string // SVC_JWT_ISSUER: iss of first-party tokens
	Audience string // SVC_JWT_AUDIENCE: checked when non-empty
	// ReconcileInterval is SVC_AUTH_CACHE_RECONCILE_INTERVAL.
	ReconcileInterval time.Duration
	// MaxCacheBytes bounds the verified-token cache (default 64 MiB).
	MaxCacheBytes int64
	Log           *slog.Logger
	// Revocations persists revoked jtis (RFC 7009); nil: nothing can be
	// revoked.
	Revocations storage.RevokedTokens
}

type entry struct {
	token string
	p     *iam.Principal
	until int64 // unix nanoseconds; the entry is not used from then on
	gen   uint64
	// jti and exp of a token svc signed (own); jti is empty for federated
	// tokens, which svc cannot revoke.
	jti string
	exp time.Time
	own bool
}

// Cache is the verification chain with its caches. Principals it returns
// are shared between requests and must not be modified.
type Cache struct {
	keys     *iam.Keys
	ext      []External
	opt      Options
	parser   *jwt.Parser
	verified *ristretto.Cache[uint64, *entry]
	unknown  *ristretto.Cache[string, uint64] // kid → generation when found unknown
	sf       singleflight.Group
	clock    atomic.Pointer[func() time.Time] // replaceable by tests while the loops run
	epoch    time.Time

	gen        atomic.Uint64
	ringFP     atomic.Uint64
	lastOK     atomic.Int64 // since epoch, of the last successful reconcile
	lastReload atomic.Int64 // since epoch, of the last unknown-kid reload

	// The coarse clock: time.Now costs more than the rest of a cache hit
	// on some hosts, so while the loop runs a ticker publishes the wall
	// time and the staleness verdict every clockTick for the hot path.
	coarse   atomic.Bool
	fake     atomic.Bool // a test clock is set: never use the coarse one
	wallNS   atomic.Int64
	staleNow atomic.Bool

	mu      sync.Mutex
	stop    chan struct{}
	stopped chan struct{}

	// revoked is the set of revoked jtis (nil while empty, so the hot path
	// pays one atomic load when nothing is revoked).
	revoked atomic.Pointer[revokedSet]
	revMu   sync.Mutex // serialises writers of revoked
}

// clockTick is the coarse clock's resolution: a cached token may outlive
// its expiry (which already includes 30 s leeway) by at most this much.
const clockTick = 20 * time.Millisecond

// New builds the chain: own keys, then each External in order. keys must
// have been loaded (Keys.Bootstrap).
func New(keys *iam.Keys, ext []External, opt Options) (*Cache, error) {
	if opt.ReconcileInterval <= 0 {
		opt.ReconcileInterval = time.Minute
	}
	if opt.MaxCacheBytes <= 0 {
		opt.MaxCacheBytes = 64 << 20
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	verified, err := ristretto.NewCache(&ristretto.Config[uint64, *entry]{
		NumCounters: 1 << 20, MaxCost: opt.MaxCacheBytes, BufferItems: 64,
		// The key already is a hash of the token; the entry holds the
		// token itself, compared on every hit, so a collision cannot
		// hand one token's principal to another.
		KeyToHash: func(k uint64) (uint64, uint64) { return k, 0 },
	})
	if err != nil {
		return nil, fmt.Errorf("authcache: token cache: %w", err)
	}
	unknown, err := ristretto.NewCache(&ristretto.Config[string, uint64]{
		NumCounters: 1 << 16, MaxCost: 1 << 14, BufferItems: 64,
	})
	if err != nil {
		return nil, fmt.Errorf("authcache: negative cache: %w", err)
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithLeeway(Leeway), jwt.WithIssuer(opt.Issuer),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
	}
	if opt.Audience != "" {
		opts = append(opts, jwt.WithAudience(opt.Audience))
	}
	c := &Cache{keys: keys, ext: ext, opt: opt, verified: verified, unknown: unknown}
	system := time.Now
	c.clock.Store(&system)
	c.epoch = c.now()
	opts = append(opts, jwt.WithTimeFunc(func() time.Time { return c.now() }))
	c.parser = jwt.NewParser(opts...)
	c.ringFP.Store(keys.Ring().Fingerprint)
	c.lastOK.Store(0)
	c.lastReload.Store(-int64(minReloadGap))
	prev := keys.OnChange
	keys.OnChange = func() {
		if prev != nil {
			prev()
		}
		c.Purge()
	}
	return c, nil
}

// SetClock replaces the clock (tests); safe while the loops run.
func (c *Cache) SetClock(now func() time.Time) {
	c.fake.Store(true)
	c.coarse.Store(false)
	c.clock.Store(&now)
	// epoch stays (the loops read it); the test clock must start near the
	// real time, and counts as freshly reconciled.
	c.lastOK.Store(c.since(now()))
	c.lastReload.Store(c.since(now()) - int64(minReloadGap))
}

func (c *Cache) since(t time.Time) int64 { return int64(t.Sub(c.epoch)) }

func (c *Cache) now() time.Time { return (*c.clock.Load())() }

// Purge makes every cached verification void; the federation side calls it
// when a provider or trusted key is invalidated or deleted.
// Negative entries carry the generation too, so they lapse with it (and no
// ristretto Clear, which must not race with Get and Set, is needed).
func (c *Cache) Purge() { c.gen.Add(1) }

// Stale reports whether verification fails closed at now.
func (c *Cache) Stale(now time.Time) bool {
	return c.since(now)-c.lastOK.Load() > int64(staleAfter*c.opt.ReconcileInterval)
}

// Verify returns the principal of a bearer token, or an error. A token
// verified before is answered from the cache until its expiry.
func (c *Cache) Verify(ctx context.Context, token []byte) (*iam.Principal, error) {
	var wall int64
	if c.coarse.Load() {
		if c.staleNow.Load() {
			return nil, ErrStale
		}
		wall = c.wallNS.Load()
	} else {
		now := c.now()
		if c.Stale(now) {
			return nil, ErrStale
		}
		wall = now.UnixNano()
	}
	e, err := c.lookup(ctx, token, wall)
	if err != nil {
		return nil, err
	}
	return e.p, nil
}

// lookup is Verify returning the cache entry (which also carries the jti).
func (c *Cache) lookup(ctx context.Context, token []byte, wall int64) (*entry, error) {
	h := xxhash.Sum64(token)
	if e, ok := c.verified.Get(h); ok && e.gen == c.gen.Load() && wall < e.until && e.token == string(token) {
		if c.isRevoked(e.jti) {
			return nil, ErrRevoked
		}
		return e, nil
	}
	if len(token) > maxTokenBytes {
		return nil, errTooLarge
	}
	now := c.now()
	gen := c.gen.Load()
	tok := string(token)
	e, err := c.verifySlow(ctx, tok, now)
	if err != nil {
		return nil, err
	}
	if c.isRevoked(e.jti) {
		return nil, ErrRevoked
	}
	e.token, e.gen = tok, gen
	if e.until > now.UnixNano() {
		// No ristretto TTL: its expiry check would read the clock on every
		// Get. Entries past `until` are ignored above and age out by cost.
		c.verified.Set(h, e, int64(len(tok))+256)
	}
	return e, nil
}

// verifySlow runs the chain: own keys, then each External; only an unknown
// kid moves on, every other failure is final (docs/decisions/0007-bearer-verification.md).
func (c *Cache) verifySlow(ctx context.Context, tok string, now time.Time) (*entry, error) {
	e, err := c.verifyOwn(ctx, tok, now)
	if !errors.Is(err, ErrUnknownKID) {
		return e, err
	}
	for _, x := range c.ext {
		p, exp, err := x.VerifyExternal(ctx, tok)
		if errors.Is(err, ErrNoMatch) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, errNoSubject
		}
		// Another node may invalidate the provider or key; that reaches
		// this node within one reconcile interval, so cache no longer.
		until := now.Add(c.opt.ReconcileInterval)
		if exp.Before(until) {
			until = exp
		}
		return &entry{p: p, until: until.UnixNano(), exp: exp}, nil
	}
	return nil, ErrUnknownKID
}

// VerifyOwn verifies a token against svc's own keypairs only.
func (c *Cache) verifyOwn(ctx context.Context, tok string, now time.Time) (*entry, error) {
	var claims iam.InboundClaims
	var key *iam.RingKey
	_, err := c.parser.ParseWithClaims(tok, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, ok := c.ownKey(ctx, kid, now)
		if !ok {
			return nil, ErrUnknownKID
		}
		key = k
		return k.Public, nil
	})
	if err != nil {
		if errors.Is(err, ErrUnknownKID) {
			return nil, ErrUnknownKID
		}
		return nil, err
	}
	p, err := claims.Principal()
	if err != nil {
		return nil, err
	}
	exp := claims.ExpiresAt.Add(Leeway)
	until := exp
	if key.ValidTo.Before(until) {
		until = key.ValidTo
	}
	return &entry{p: p, until: until.UnixNano(), jti: claims.ID, exp: exp, own: true}, nil
}

// ownKey finds kid among the keypairs. A kid not in the snapshot may be a
// key created on another node since the last reconcile: reload once
// (single-flight, rate-limited), then remember the kid as unknown.
func (c *Cache) ownKey(ctx context.Context, kid string, now time.Time) (*iam.RingKey, bool) {
	if kid == "" || len(kid) > maxKIDBytes {
		return nil, false
	}
	if k, ok := c.keys.Ring().Lookup(kid, now); ok {
		return k, true
	}
	gen := c.gen.Load()
	if g, neg := c.unknown.Get(kid); neg && g == gen {
		return nil, false
	}
	// Concurrent callers join one reload; within minReloadGap of the last
	// one nobody reloads again.
	_, _, _ = c.sf.Do("reload", func() (any, error) {
		at := c.since(c.now())
		if at-c.lastReload.Load() < int64(minReloadGap) {
			return nil, nil
		}
		c.lastReload.Store(at)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := c.keys.Reload(rctx)
		c.noteRing()
		return nil, err
	})
	if k, ok := c.keys.Ring().Lookup(kid, now); ok {
		return k, true
	}
	c.unknown.SetWithTTL(kid, c.gen.Load(), 1, negativeTTL)
	return nil, false
}

// noteRing voids cached verifications when the key set changed.
func (c *Cache) noteRing() {
	fp := c.keys.Ring().Fingerprint
	if c.ringFP.Swap(fp) != fp {
		c.gen.Add(1)
	}
}

// VerifySubject verifies a token-exchange subject token through the whole
// chain (any validator, docs/decisions/0005-token-endpoint.md), bypassing nothing.
func (c *Cache) VerifySubject(ctx context.Context, token string) (*iam.Principal, error) {
	return c.Verify(ctx, []byte(token))
}

// Reconcile re-reads keypairs (and the Externals that reconcile) from
// storage; on success it records the time, which keeps verification open.
func (c *Cache) Reconcile(ctx context.Context) error {
	err := c.keys.Reload(ctx)
	c.noteRing()
	if rerr := c.reloadRevoked(ctx); rerr != nil && err == nil {
		err = rerr
	}
	for _, e := range c.ext {
		if r, ok := e.(Reconciler); ok {
			if rerr := r.Reconcile(ctx); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	if err != nil {
		return fmt.Errorf("authcache: reconcile: %w", err)
	}
	c.lastOK.Store(c.since(c.now()))
	return nil
}

// Start runs the reconcile loop until Stop: every interval ±10 %, so nodes
// started together do not hit storage in step. It reconciles once before
// returning so verification starts open.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		return errors.New("authcache: already started")
	}
	if err := c.Reconcile(ctx); err != nil {
		return err
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	c.stop, c.stopped = stop, stopped
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.loop(stop) }()
	go func() { defer wg.Done(); c.clockLoop(stop) }()
	go func() { wg.Wait(); close(stopped) }()
	return nil
}

// clockLoop publishes the coarse clock until stop.
func (c *Cache) clockLoop(stop chan struct{}) {
	t := time.NewTicker(clockTick)
	defer t.Stop()
	defer c.coarse.Store(false)
	c.tickClock()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.tickClock()
		}
	}
}

func (c *Cache) tickClock() {
	if c.fake.Load() {
		return
	}
	now := c.now()
	// The verdict covers the next tick too, so it never lags the truth.
	c.staleNow.Store(c.Stale(now.Add(clockTick)))
	c.wallNS.Store(now.UnixNano())
	c.coarse.Store(true)
	// A test clock set since the check above wins: SetClock's
	// coarse=false may have landed before the store just made.
	if c.fake.Load() {
		c.coarse.Store(false)
	}
}

func (c *Cache) loop(stop chan struct{}) {
	for {
		wait := time.Duration(float64(c.opt.ReconcileInterval) * (0.9 + 0.2*rand.Float64()))
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.opt.ReconcileInterval)
		if err := c.Reconcile(ctx); err != nil {
			c.opt.Log.Error("auth cache reconcile failed; keeping the previous keys", "err", err)
		}
		cancel()
	}
}

// Stop ends the reconcile loop and waits for it.
func (c *Cache) Stop() {
	c.mu.Lock()
	stop, stopped := c.stop, c.stopped
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// Close stops the loop and releases the caches.
func (c *Cache) Close() {
	c.Stop()
	c.verified.Close()
	c.unknown.Close()
}
