package authcache

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/iam"
	"svc/storage"
	"svc/storage/memory"
)

// node is one verification cache over shared stores, as one node of a
// cluster (or one process lifetime) has.
func node(t testing.TB, keys *iam.Keys, rev storage.RevokedTokens) *Cache {
	t.Helper()
	c, err := New(keys, nil, Options{Issuer: "svc", ReconcileInterval: time.Minute, Revocations: rev})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func revocation(jti string, until time.Time) *storage.RevokedToken {
	return &storage.RevokedToken{JTI: jti, Tenant: "t1", ClientID: "C1", Until: until, RevokedAt: time.Now()}
}

// A revoked jti is refused on the cached path and the slow path of the
// revoking node at once, by a node that reconciles, and by a node started
// afterwards (a restart), until the token lapses.
func TestRevokedTokenRefusedEverywhere(t *testing.T) {
	f := newFixture(t)
	rev := memory.NewRevokedTokens()
	a, b := node(t, f.keys, rev), node(t, f.keys, rev)
	ctx := context.Background()
	tok := []byte(f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["jti"] = "jti-1" }))
	other := []byte(f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["jti"] = "jti-2" }))
	for _, c := range []*Cache{a, b} {
		if _, err := c.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
		c.verified.Wait() // the token is now answered from the cache
	}
	p, info, err := a.Inspect(ctx, tok)
	if err != nil || p.TenantID != "t1" || info.JTI != "jti-1" || !info.Own || info.Until.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("inspect: %+v %v", info, err)
	}
	if err := a.Revoke(ctx, revocation(info.JTI, info.Until)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoking node, cached token: %v", err)
	}
	if _, _, err := a.Inspect(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoking node, inspect: %v", err)
	}
	if _, err := a.Verify(ctx, other); err != nil {
		t.Fatalf("another jti is untouched: %v", err)
	}
	// Node b still holds the token in its cache; its reconcile tick reads
	// the revocation from storage.
	if err := b.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("other node after reconcile: %v", err)
	}
	// A node started later (a restart) refuses it from its first request,
	// on the slow path.
	c := node(t, f.keys, rev)
	if _, err := c.Verify(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("restarted node: %v", err)
	}
}

// Lapsed revocations leave the set and storage; live ones stay.
func TestRevokedSetPrunes(t *testing.T) {
	f := newFixture(t)
	rev := memory.NewRevokedTokens()
	c := node(t, f.keys, rev)
	ctx := context.Background()
	now := time.Now()
	if err := c.Revoke(ctx, revocation("live", now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := c.Revoke(ctx, revocation("old", now.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if !c.isRevoked("live") || !c.isRevoked("old") || c.isRevoked("") || c.isRevoked("other") {
		t.Fatal("set after revoke")
	}
	c.SetClock(func() time.Time { return now.Add(2 * time.Minute) })
	if err := c.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.isRevoked("live") || c.isRevoked("old") {
		t.Fatal("lapsed revocation kept or live one dropped")
	}
	if l, _ := rev.ListRevokedTokens(ctx, now.Add(-time.Hour)); len(l) != 1 || l[0].JTI != "live" {
		t.Fatalf("storage after purge: %+v", l)
	}
}

// A failing revocation store fails the reconcile (so a node that cannot
// learn of revocations eventually fails closed, like any stale cache).
func TestRevocationStoreDownFailsReconcile(t *testing.T) {
	f := newFixture(t)
	c := node(t, f.keys, memory.NewRevokedTokens())
	c.opt.Revocations = downRevocations{}
	if err := c.Reconcile(context.Background()); err == nil {
		t.Fatal("reconcile succeeded with the revocation store down")
	}
}

type downRevocations struct{ storage.RevokedTokens }

func (downRevocations) ListRevokedTokens(context.Context, time.Time) ([]*storage.RevokedToken, error) {
	return nil, errors.New("storage down")
}

// Tokens svc did not sign, and tokens without a jti, cannot be revoked.
func TestRevokeNeedsJTI(t *testing.T) {
	f := newFixture(t)
	c := node(t, f.keys, memory.NewRevokedTokens())
	if err := c.Revoke(context.Background(), revocation("", time.Now().Add(time.Hour))); !errors.Is(err, ErrNotRevocable) {
		t.Fatalf("empty jti: %v", err)
	}
}

// BenchmarkVerifyCachedRevocations is the hot path with revocations in
// force (the token itself not revoked): one more map probe, no allocation.
func BenchmarkVerifyCachedRevocations(b *testing.B) {
	f := newFixture(b)
	rev := memory.NewRevokedTokens()
	c := node(b, f.keys, rev)
	ctx := context.Background()
	var l []*storage.RevokedToken
	for i := 0; i < 10000; i++ {
		l = append(l, revocation(fmt.Sprint("r", i), time.Now().Add(time.Hour)))
	}
	c.addRevoked(l, time.Now(), false)
	tok := []byte(f.mint(b, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["jti"] = "live" }))
	if _, err := c.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	c.verified.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
