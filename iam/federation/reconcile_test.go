package federation

import (
	"context"
	"errors"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/authcache"
	"svc/internal/await"
	"svc/storage"
	"svc/storage/memory"
)

// Two nodes share one store: a key registered on node 1 verifies on node 2
// once node 2's reconcile loop has run, and node 2 fails closed when it
// has not reconciled for ten intervals.
func TestReconcileAcrossNodesAndFailClosed(t *testing.T) {
	store := memory.NewIAMStores().TrustedKeys
	cfg := TrustedConfig{Enabled: true, MaxJWKProps: 20, Issuer: svcIssuer, ReconcileInterval: 5 * time.Millisecond}
	node1, node2 := NewTrustedKeys(cfg, store), NewTrustedKeys(cfg, store)
	if err := node2.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { node2.Run(ctx); close(done) }()
	k := testKey(t, 0)
	if _, err := node1.Register(bg, "A", &TrustedKeyRegistration{KeyID: "a1", JWK: json.RawMessage(jwkJSON("a1", &k.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	tok := sign(t, k, "a1", fpClaims("A", nil))
	await.Value(t, await.Long, func() (error, bool) {
		_, _, err := node2.Verifier().VerifyExternal(bg, tok)
		return err, err == nil
	}, "node 2 picks up the key")
	cancel()
	<-done // the loop stops with its context

	// Pretend the last success was long ago: verification fails closed.
	node2.health.start = node2.health.start.Add(-time.Hour)
	if _, _, err := node2.Verifier().VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("stale cache verified: %v", err)
	}
	if err := node2.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node2.Verifier().VerifyExternal(bg, tok); err != nil {
		t.Fatalf("after a successful reconcile: %v", err)
	}
}

type failingProviders struct{ storage.OIDCProviders }

func (failingProviders) ListAllProviders(context.Context) ([]*storage.OIDCProvider, error) {
	return nil, errors.New("database down")
}

func TestProvidersFailClosedWhenStale(t *testing.T) {
	idp := newTestIdP(t)
	p, store := newTestProviders(t, idp, nil)
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	tok := idp.Token(t, "k1", "alice", nil)
	if _, _, err := p.Verifier().VerifyExternal(bg, tok); err != nil {
		t.Fatal(err)
	}
	// A failed reconcile keeps the old snapshot...
	p.store = failingProviders{store}
	if err := p.Refresh(bg); err == nil {
		t.Fatal("refresh against a failing store succeeded")
	}
	if _, _, err := p.Verifier().VerifyExternal(bg, tok); err != nil {
		t.Fatalf("one failed reconcile dropped the providers: %v", err)
	}
	// ...until ten intervals have passed without success.
	p.health.start = p.health.start.Add(-time.Hour)
	if _, _, err := p.Verifier().VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("stale provider cache verified: %v", err)
	}
}

func TestOnChangeFiresOnlyOnChange(t *testing.T) {
	tk := NewTrustedKeys(TrustedConfig{Enabled: true, MaxJWKProps: 20, Issuer: svcIssuer}, memory.NewIAMStores().TrustedKeys)
	calls := 0
	tk.OnChange(func() { calls++ })
	tk.Refresh(bg)
	base := calls
	if _, err := tk.Register(bg, "A", reg("a1", 0)); err != nil {
		t.Fatal(err)
	}
	if calls != base+1 {
		t.Fatalf("register: %d hook calls", calls-base)
	}
	tk.Refresh(bg)
	tk.Refresh(bg)
	if calls != base+1 {
		t.Fatalf("refresh without change fired the hook: %d", calls-base)
	}
	zero := int64(0)
	tk.Invalidate(bg, "A", "a1", &zero)
	if calls != base+2 {
		t.Fatalf("invalidate: %d hook calls", calls-base)
	}
}

// TestReloadIsClusterWide: the IdP drops a compromised key; a reload on
// node 1 refuses its tokens at once, and node 2 follows on its next
// reconcile, while the replacement key works on both.
func TestReloadIsClusterWide(t *testing.T) {
	idp := newTestIdP(t)
	store := memory.NewIAMStores().Providers
	mk := func() *Providers {
		p, err := NewProviders(ProvidersConfig{RolesClaim: "roles", RequireHTTPS: true, Net: idp.NetOptions(), ReconcileInterval: time.Minute}, store)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	node1, node2 := mk(), mk()
	register(t, node1, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	if err := node2.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	old := idp.Token(t, "k1", "alice", nil)
	for i, n := range []*Providers{node1, node2} {
		if _, _, err := n.Verifier().VerifyExternal(bg, old); err != nil {
			t.Fatalf("node %d before rotation: %v", i+1, err)
		}
	}
	idp.Rotate("k2", testKey(t, 1))
	if err := node1.Reload(bg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node1.Verifier().VerifyExternal(bg, old); err == nil {
		t.Fatal("node 1 still accepts the dropped key after reload")
	}
	if err := node2.Refresh(bg); err != nil { // node 2's reconcile tick
		t.Fatal(err)
	}
	if _, _, err := node2.Verifier().VerifyExternal(bg, old); err == nil {
		t.Fatal("node 2 still accepts the dropped key after its reconcile")
	}
	fresh := idp.Token(t, "k2", "alice", nil)
	for i, n := range []*Providers{node1, node2} {
		if _, _, err := n.Verifier().VerifyExternal(bg, fresh); err != nil {
			t.Fatalf("node %d with the new key: %v", i+1, err)
		}
	}
}
