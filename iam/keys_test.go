package iam

import (
	"context"
	"crypto/rsa"
	"errors"
	"testing"
	"time"

	"svc/internal/testkeys"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
)

// testKeys are two distinct fixed test keys (generating them costs seconds
// under -race).
func testKeys() (*rsa.PrivateKey, *rsa.PrivateKey) { return testkeys.RSA(5), testkeys.RSA(6) }

func newTestKeys(t *testing.T, st storage.Keypairs, signing *rsa.PrivateKey, aud string) *Keys {
	t.Helper()
	k, err := NewKeys(st, signing, aud, 365)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBootstrapKIDIsDeterministic(t *testing.T) {
	a, _ := testKeys()
	k1 := newTestKeys(t, memory.NewIAMStores().Keypairs, a, AudienceClient)
	k2 := newTestKeys(t, memory.NewIAMStores().Keypairs, a, AudienceClient)
	if k1.BootstrapKID() != k2.BootstrapKID() || len(k1.BootstrapKID()) != 32 {
		t.Fatalf("kids %q %q", k1.BootstrapKID(), k2.BootstrapKID())
	}
	if s := k1.Ring().Signer(AudienceClient, time.Now()); s == nil || s.KID != k1.BootstrapKID() || s.Private != a {
		t.Fatalf("bootstrap signer: %+v", s)
	}
}

func TestHumanBootstrapDoesNotSignMachineTokens(t *testing.T) {
	a, _ := testKeys()
	k := newTestKeys(t, memory.NewIAMStores().Keypairs, a, AudienceHuman)
	if s := k.Ring().Signer(AudienceClient, time.Now()); s != nil {
		t.Fatalf("human bootstrap key signs client tokens: %s", s.KID)
	}
	is := NewIssuer(k, "svc", "", 60)
	if _, err := is.ClientCredentials(&storage.M2MClient{ClientID: "c"}); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("issue without a client key: %v", err)
	}
	if _, ok := k.Ring().Lookup(k.BootstrapKID(), time.Now()); !ok {
		t.Fatal("human bootstrap key does not verify")
	}
}

func TestSignerSelectionAndWindows(t *testing.T) {
	a, _ := testKeys()
	ctx := context.Background()
	k := newTestKeys(t, memory.NewIAMStores().Keypairs, a, AudienceClient)
	now := time.Now()
	future := now.Add(time.Hour)
	pending, err := k.Issue(ctx, IssueRequest{Audience: AudienceClient, ValidFrom: &future})
	if err != nil {
		t.Fatal(err)
	}
	if s := k.Ring().Signer(AudienceClient, now); s.KID != k.BootstrapKID() {
		t.Fatalf("a future key signs already: %s", s.KID)
	}
	if _, ok := k.Ring().Lookup(pending.KID, now); ok {
		t.Fatal("a future key verifies already")
	}
	if s := k.Ring().Signer(AudienceClient, future.Add(time.Second)); s.KID != pending.KID {
		t.Fatalf("signer once the future key is valid: %s", s.KID)
	}
	fresh, err := k.Issue(ctx, IssueRequest{Audience: AudienceClient, InvalidateCurrent: true, GracePeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s := k.Ring().Signer(AudienceClient, time.Now()); s.KID != fresh.KID {
		t.Fatalf("new key does not sign: %s", s.KID)
	}
	// The retired bootstrap key verifies through its grace, not after.
	if _, ok := k.Ring().Lookup(k.BootstrapKID(), time.Now().Add(30*time.Second)); !ok {
		t.Fatal("bootstrap key stopped verifying inside its grace")
	}
	if _, ok := k.Ring().Lookup(k.BootstrapKID(), time.Now().Add(2*time.Minute)); ok {
		t.Fatal("bootstrap key verifies after its grace")
	}
	// Invalidation never extends validTo.
	if err := k.Invalidate(ctx, k.BootstrapKID(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Ring().Lookup(k.BootstrapKID(), time.Now().Add(2*time.Minute)); ok {
		t.Fatal("a second invalidation extended the key's life")
	}
	if err := k.Invalidate(ctx, "nope", 0); err == nil {
		t.Fatal("unknown kid invalidated")
	} else if e, _ := apierr.As(err); e.Code.String() != "KEYPAIR_NOT_FOUND" {
		t.Fatalf("unknown kid: %v", err)
	}
	if _, err := k.Issue(ctx, IssueRequest{Audience: AudienceClient, InvalidateCurrent: true, GracePeriod: MaxGracePeriod + time.Second}); err == nil {
		t.Fatal("grace above the cap accepted")
	}
	if _, err := k.Issue(ctx, IssueRequest{Audience: AudienceClient, InvalidateCurrent: true, GracePeriod: MaxGracePeriod}); err != nil {
		t.Fatalf("grace at the cap: %v", err)
	}
}

// A deleted bootstrap keypair stays deleted across a restart, and runtime
// keys survive one (their private halves reopen with the same signing key,
// but not with another).
func TestRestartKeepsLifecycleAndSealedKeys(t *testing.T) {
	a, b := testKeys()
	ctx := context.Background()
	st := memory.NewIAMStores().Keypairs
	k := newTestKeys(t, st, a, AudienceClient)
	rt, err := k.Issue(ctx, IssueRequest{Audience: AudienceClient})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Delete(ctx, k.BootstrapKID()); err != nil {
		t.Fatal(err)
	}
	again := newTestKeys(t, st, a, AudienceClient)
	if _, ok := again.Ring().Lookup(k.BootstrapKID(), time.Now()); ok {
		t.Fatal("restart resurrected a deleted bootstrap key")
	}
	if s := again.Ring().Signer(AudienceClient, time.Now()); s == nil || s.KID != rt.KID {
		t.Fatalf("runtime key does not sign after restart: %+v", s)
	}
	other := newTestKeys(t, st, b, AudienceClient)
	if s := other.Ring().Signer(AudienceClient, time.Now()); s != nil && s.KID == rt.KID {
		t.Fatal("a sealed key opened under another signing key")
	}
	if _, ok := other.Ring().Lookup(rt.KID, time.Now()); !ok {
		t.Fatal("the runtime key should still verify (public half)")
	}
}

func TestClientAuthentication(t *testing.T) {
	ctx := context.Background()
	c := NewClients(memory.NewIAMStores().Clients, false)
	cr, err := c.Create(ctx, "t1", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Roles) != 1 || cr.Roles[0] != RoleM2M {
		t.Fatalf("roles: %v", cr.Roles)
	}
	if rec, err := c.Authenticate(ctx, cr.ClientID, cr.Secret); err != nil || rec.Tenant != "t1" {
		t.Fatalf("right secret: %v", err)
	}
	for _, bad := range [][2]string{{cr.ClientID, cr.Secret + "x"}, {cr.ClientID, ""}, {"UNKNOWN", cr.Secret}, {"", ""}} {
		if _, err := c.Authenticate(ctx, bad[0], bad[1]); !errors.Is(err, ErrInvalidClient) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	if _, err := c.Create(ctx, "t1", true); err == nil {
		t.Fatal("admin role granted with the flag off")
	}
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		id := newClientID()
		if seen[id] || len(id) != 16 {
			t.Fatalf("id %q repeated or malformed", id)
		}
		seen[id] = true
	}
}

// Restarting with a new SVC_JWT_SIGNING_KEY ends the old bootstrap key's
// window after the configured grace.
func TestSigningKeyRotationRetiresOldBootstrap(t *testing.T) {
	a, b := testKeys()
	st := memory.NewIAMStores().Keypairs
	old := newTestKeys(t, st, a, AudienceClient)
	k, err := NewKeys(st, b, AudienceClient, 365)
	if err != nil {
		t.Fatal(err)
	}
	k.PreviousBootstrapGrace = time.Hour
	if err := k.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, ok := k.Ring().Lookup(old.BootstrapKID(), now.Add(59*time.Minute)); !ok {
		t.Fatal("old bootstrap key stopped verifying inside the grace")
	}
	if _, ok := k.Ring().Lookup(old.BootstrapKID(), now.Add(61*time.Minute)); ok {
		t.Fatal("old bootstrap key verifies after the grace")
	}
	if s := k.Ring().Signer(AudienceClient, now); s == nil || s.KID != k.BootstrapKID() {
		t.Fatalf("signer after rotation: %+v", s)
	}
}
