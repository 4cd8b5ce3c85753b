package authcache

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/iam"
	"svc/internal/await"
	"svc/internal/testkeys"
	"svc/storage"
	"svc/storage/memory"
)

// rsaKey is a fixed test key (generating one costs seconds under -race).
func rsaKey() *rsa.PrivateKey { return testkeys.RSA(5) }

// countingKeypairs counts ListKeypairs calls, i.e. reloads.
type countingKeypairs struct {
	storage.Keypairs
	lists atomic.Int64
	fail  atomic.Bool
}

func (c *countingKeypairs) ListKeypairs(ctx context.Context) ([]*storage.Keypair, error) {
	c.lists.Add(1)
	if c.fail.Load() {
		return nil, errors.New("storage down")
	}
	return c.Keypairs.ListKeypairs(ctx)
}

type fixture struct {
	store *countingKeypairs
	keys  *iam.Keys
	cache *Cache
}

func newFixture(t testing.TB, ext ...External) *fixture {
	t.Helper()
	st := &countingKeypairs{Keypairs: memory.NewIAMStores().Keypairs}
	keys, err := iam.NewKeys(st, rsaKey(), iam.AudienceClient, 365)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := New(keys, ext, Options{Issuer: "svc", ReconcileInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &fixture{store: st, keys: keys, cache: c}
}

func (f *fixture) mint(t testing.TB, kid string, edit func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"sub": "u1", "iss": "svc", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"caas_org_id": "t1", "user_roles": []string{"ROLE_ADMIN"}}
	if edit != nil {
		edit(c)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(rsaKey())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyBindsPrincipal(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["scopes"] = []string{"ROLE_M2M"} })
	p, err := f.cache.Verify(context.Background(), []byte(tok))
	if err != nil {
		t.Fatal(err)
	}
	if p.TenantID != "t1" || p.UserID != "u1" || p.Subject != "u1" || len(p.Roles) != 1 || p.Roles[0] != "ROLE_ADMIN" || p.Kind != "service" {
		t.Fatalf("principal: %+v", p)
	}
	obo := f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) {
		c["scopes"] = []string{"ROLE_M2M"}
		c["act"] = map[string]string{"sub": "client"}
	})
	if p, _ := f.cache.Verify(context.Background(), []byte(obo)); p.Kind != "user" {
		t.Fatalf("on-behalf-of kind: %s", p.Kind)
	}
}

// A kid unknown locally triggers one reload (a key created on another node
// verifies at once); repeating it hits the negative cache, not storage.
func TestUnknownKidReloadAndNegativeCache(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// "Another node" issues a keypair straight into the shared store.
	other, err := iam.NewKeys(f.store.Keypairs, rsaKey(), iam.AudienceClient, 365)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := other.Issue(ctx, iam.IssueRequest{Audience: iam.AudienceClient})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.keys.Ring().Lookup(rec.KID, time.Now()); ok {
		t.Fatal("fixture: the local ring already knows the other node's key")
	}
	other.Reload(ctx)
	tok := other.Ring().Signer(iam.AudienceClient, time.Now())
	signed := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u", "iss": "svc", "iat": time.Now().Unix(),
		"exp": time.Now().Add(time.Hour).Unix(), "caas_org_id": "t1"})
	signed.Header["kid"] = tok.KID
	s, _ := signed.SignedString(tok.Private)
	before := f.store.lists.Load()
	if _, err := f.cache.Verify(ctx, []byte(s)); err != nil {
		t.Fatalf("key from another node: %v", err)
	}
	if f.store.lists.Load() != before+1 {
		t.Fatalf("reloads: %d", f.store.lists.Load()-before)
	}

	bogus := f.mint(t, "no-such-kid", nil)
	// Past the reload gap by the cache's clock instead of sleeping it out.
	later := time.Now().Add(minReloadGap + 50*time.Millisecond)
	f.cache.SetClock(func() time.Time { return later })
	before = f.store.lists.Load()
	for i := 0; i < 20; i++ {
		if _, err := f.cache.Verify(ctx, []byte(bogus)); !errors.Is(err, ErrUnknownKID) {
			t.Fatalf("bogus kid: %v", err)
		}
	}
	f.cache.unknown.Wait()
	if got := f.store.lists.Load() - before; got != 1 {
		t.Fatalf("%d reloads for one unknown kid, want 1", got)
	}
}

type fakeExt struct {
	p     *iam.Principal
	err   error
	calls atomic.Int64
}

func (e *fakeExt) VerifyExternal(context.Context, string) (*iam.Principal, time.Time, error) {
	e.calls.Add(1)
	return e.p, time.Now().Add(time.Hour), e.err
}

func TestChainOrder(t *testing.T) {
	noMatch := &fakeExt{err: ErrNoMatch}
	second := &fakeExt{p: &iam.Principal{TenantID: "fed", UserID: "x"}}
	third := &fakeExt{p: &iam.Principal{TenantID: "never"}}
	f := newFixture(t, noMatch, second, third)
	ctx := context.Background()

	p, err := f.cache.Verify(ctx, []byte(f.mint(t, "foreign-kid", nil)))
	if err != nil || p.TenantID != "fed" || noMatch.calls.Load() != 1 || third.calls.Load() != 0 {
		t.Fatalf("chain: %+v %v calls %d/%d", p, err, noMatch.calls.Load(), third.calls.Load())
	}
	// Own kid with a foreign issuer: a hard failure, External not asked.
	calls := second.calls.Load()
	if _, err := f.cache.Verify(ctx, []byte(f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["iss"] = "x" }))); err == nil {
		t.Fatal("foreign iss under an own kid verified")
	}
	if second.calls.Load() != calls {
		t.Fatal("External consulted after a hard failure")
	}
	// An External refusal other than ErrNoMatch is final.
	failing := &fakeExt{err: errors.New("bad signature")}
	g := newFixture(t, failing, third)
	if _, err := g.cache.Verify(ctx, []byte(g.mint(t, "foreign-kid", nil))); err == nil || third.calls.Load() != 0 {
		t.Fatalf("refusal did not stop the chain: %v", err)
	}
	// Purge voids cached External verifications.
	tok := []byte(f.mint(t, "foreign-kid-2", nil))
	f.cache.Verify(ctx, tok)
	f.cache.verified.Wait()
	n := second.calls.Load()
	f.cache.Verify(ctx, tok)
	if second.calls.Load() != n {
		t.Fatal("cached token re-verified")
	}
	f.cache.Purge()
	f.cache.Verify(ctx, tok)
	if second.calls.Load() != n+1 {
		t.Fatal("purge did not void the cache")
	}
}

// After 10 intervals without a successful reconcile, verification fails
// closed, cached tokens included; a successful reconcile reopens it.
func TestFailClosedWhenStale(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	f.cache.SetClock(func() time.Time { return now })
	if err := f.cache.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	tok := []byte(f.mint(t, f.keys.BootstrapKID(), nil))
	if _, err := f.cache.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	f.store.fail.Store(true)
	now = now.Add(9 * time.Minute)
	if err := f.cache.Reconcile(ctx); err == nil {
		t.Fatal("reconcile against failing storage succeeded")
	}
	if _, err := f.cache.Verify(ctx, tok); err != nil {
		t.Fatalf("9 intervals: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := f.cache.Verify(ctx, tok); !errors.Is(err, ErrStale) {
		t.Fatalf("11 intervals: %v", err)
	}
	f.store.fail.Store(false)
	if err := f.cache.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cache.Verify(ctx, tok); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

// The loop reconciles on its own and stops when told.
func TestReconcileLoopRunsAndStops(t *testing.T) {
	st := &countingKeypairs{Keypairs: memory.NewIAMStores().Keypairs}
	keys, _ := iam.NewKeys(st, rsaKey(), iam.AudienceClient, 365)
	keys.Bootstrap(context.Background())
	c, err := New(keys, nil, Options{Issuer: "svc", ReconcileInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	await.Value(t, await.Long, func() (int64, bool) { n := st.lists.Load(); return n, n >= 4 }, "the loop reconciles 4 times")
	c.Close()
	n := st.lists.Load()
	// A real sleep: an absence (no reconcile after Close) is only seen by
	// waiting; 100 ms is five reconcile intervals.
	time.Sleep(100 * time.Millisecond)
	if st.lists.Load() != n {
		t.Fatal("loop still running after Stop")
	}
}

// Concurrent first sightings of a key created on another node all verify
// and share one reload.
func TestConcurrentUnknownKidSharesOneReload(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other, _ := iam.NewKeys(f.store.Keypairs, rsaKey(), iam.AudienceClient, 365)
	if _, err := other.Issue(ctx, iam.IssueRequest{Audience: iam.AudienceClient}); err != nil {
		t.Fatal(err)
	}
	sk := other.Ring().Signer(iam.AudienceClient, time.Now())
	before := f.store.lists.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u", "iss": "svc", "iat": time.Now().Unix(),
				"exp": time.Now().Add(time.Hour).Unix(), "caas_org_id": "t1", "jti": fmt.Sprint(i)})
			tok.Header["kid"] = sk.KID
			s, _ := tok.SignedString(sk.Private)
			if _, err := f.cache.Verify(ctx, []byte(s)); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent first sighting: %v", err)
	}
	if n := f.store.lists.Load() - before; n != 1 {
		t.Fatalf("%d reloads, want 1", n)
	}
}

// Verification, purges and reconciles running together (run with -race).
func TestConcurrentVerifyPurgeReconcile(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	toks := make([][]byte, 8)
	for i := range toks {
		toks[i] = []byte(f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["jti"] = fmt.Sprint(i) }))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := f.cache.Verify(ctx, toks[(i+w)%len(toks)]); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	for i := 0; i < 20; i++ {
		f.cache.Purge()
		if err := f.cache.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		f.cache.Verify(ctx, []byte(f.mint(t, "unknown-"+string(rune('a'+i)), nil)))
	}
	close(stop)
	wg.Wait()
}

// The same fail-closed rule on the hot path, where the coarse clock and the
// loop's staleness verdict are read instead of time.Now.
func TestFailClosedWithCoarseClock(t *testing.T) {
	st := &countingKeypairs{Keypairs: memory.NewIAMStores().Keypairs}
	keys, _ := iam.NewKeys(st, rsaKey(), iam.AudienceClient, 365)
	keys.Bootstrap(context.Background())
	c, err := New(keys, nil, Options{Issuer: "svc", ReconcileInterval: 10 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := &fixture{store: st, keys: keys, cache: c}
	tok := []byte(f.mint(t, keys.BootstrapKID(), nil))
	if _, err := c.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	await.Until(t, await.Long, c.coarse.Load, "the coarse clock runs")
	st.fail.Store(true)
	await.Value(t, await.Long, func() (error, bool) {
		_, err := c.Verify(context.Background(), tok)
		return err, errors.Is(err, ErrStale)
	}, "verification fails closed (ErrStale) with failing reconciles")
	st.fail.Store(false)
	await.Value(t, await.Long, func() (error, bool) {
		_, err := c.Verify(context.Background(), tok)
		return err, err == nil
	}, "verification reopens after reconciles succeed again")
}
