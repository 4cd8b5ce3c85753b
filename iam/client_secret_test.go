package iam

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/memory"
)

// cheap are Argon2id costs for tests that are not about the cost.
var cheap = PasswordParams{Time: 1, MemoryKiB: 64, Threads: 1}

// TestOperatorSecretStoredSlowly: the bootstrap client's secret, chosen by a
// person, is stored as Argon2id (default cost) rather than SHA-256; the
// right secret verifies, also from a fresh process with an empty cache, a
// wrong one does not, and a restart with the same secret keeps the stored
// form while a changed secret replaces it and the old one stops working
// at once, cached or not.
func TestOperatorSecretStoredSlowly(t *testing.T) {
	ctx := context.Background()
	st := memory.NewIAMStores().Clients
	c := NewClients(st, false)
	if err := c.EnsureBootstrap(ctx, "ops", "demo-secret", "t1", "admin", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	rec, err := st.LookupClient(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("demo-secret"))
	if bytes.Equal(rec.SecretHash, sum[:]) || len(rec.SecretHash) == sha256.Size || bytes.Contains(rec.SecretHash, []byte("demo-secret")) {
		t.Fatalf("operator secret stored as %q", rec.SecretHash)
	}
	h, err := parseArgon2id(rec.SecretHash)
	if err != nil || h.p != DefaultPasswordParams || len(h.salt) != argon2SaltLen {
		t.Fatalf("stored form %q: %+v %v", rec.SecretHash, h, err)
	}
	if got, err := c.Authenticate(ctx, "ops", "demo-secret"); err != nil || got.Tenant != "t1" {
		t.Fatalf("right secret: %v", err)
	}
	for _, bad := range []string{"demo-secreT", "demo-secret ", "", "demo"} {
		if _, err := c.Authenticate(ctx, "ops", bad); !errors.Is(err, ErrInvalidClient) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	// Another process (empty cache) over the same store.
	c2 := NewClients(st, false)
	if _, err := c2.Authenticate(ctx, "ops", "demo-secret"); err != nil {
		t.Fatalf("fresh process: %v", err)
	}
	if err := c2.EnsureBootstrap(ctx, "ops", "demo-secret", "t1", "admin", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if again, _ := st.LookupClient(ctx, "ops"); !bytes.Equal(again.SecretHash, rec.SecretHash) {
		t.Fatal("restart with the same secret re-hashed it")
	}
	// Rotation by configuration: the cached old secret must not survive.
	if err := c.EnsureBootstrap(ctx, "ops", "a-new-operator-secret", "t1", "admin", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Authenticate(ctx, "ops", "demo-secret"); !errors.Is(err, ErrInvalidClient) {
		t.Fatalf("old secret after rotation: %v", err)
	}
	if _, err := c.Authenticate(ctx, "ops", "a-new-operator-secret"); err != nil {
		t.Fatalf("new secret: %v", err)
	}
}

// TestStoredSHA256KeepsWorking: records written before operator secrets
// were hashed slowly (raw 32-byte SHA-256, no prefix) still verify, and
// generated secrets are still stored that way; a legacy bootstrap record is
// upgraded to Argon2id at the next start.
func TestStoredSHA256KeepsWorking(t *testing.T) {
	ctx := context.Background()
	st := memory.NewIAMStores().Clients
	c := NewClients(st, false)
	c.password = cheap
	now := time.Now()
	for _, id := range []string{"legacy", "boot"} {
		if err := st.UpsertClient(ctx, &storage.M2MClient{ClientID: id, Tenant: "t1", UserID: id, Roles: []string{RoleM2M},
			SecretHash: HashSecret("legacy-secret"), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Authenticate(ctx, "legacy", "legacy-secret"); err != nil {
		t.Fatalf("legacy SHA-256 record: %v", err)
	}
	if _, err := c.Authenticate(ctx, "legacy", "legacy-secreT"); !errors.Is(err, ErrInvalidClient) {
		t.Fatalf("legacy wrong secret: %v", err)
	}
	cr, err := c.Create(ctx, "t1", false)
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := st.LookupClient(ctx, cr.ClientID); !bytes.Equal(rec.SecretHash, HashSecret(cr.Secret)) {
		t.Fatalf("generated secret stored as %q, want its SHA-256", rec.SecretHash)
	}
	if err := c.EnsureBootstrap(ctx, "boot", "legacy-secret", "t1", "boot", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := st.LookupClient(ctx, "boot"); !isArgon2id(rec.SecretHash) {
		t.Fatalf("legacy bootstrap record not upgraded: %q", rec.SecretHash)
	}
	if _, err := c.Authenticate(ctx, "boot", "legacy-secret"); err != nil {
		t.Fatalf("upgraded bootstrap: %v", err)
	}
}

// TestVerifiedSecretCache: a verified operator secret is answered from the
// cache without Argon2id (shown with every verification slot taken: a hit
// returns, a miss waits for a slot until its context ends), the cache holds
// keyed hashes only, and a wrong secret is never cached.
func TestVerifiedSecretCache(t *testing.T) {
	ctx := context.Background()
	st := memory.NewIAMStores().Clients
	c := NewClients(st, false)
	c.password = cheap
	if err := c.EnsureBootstrap(ctx, "ops", "demo-secret", "t1", "admin", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Authenticate(ctx, "ops", "demo-secret"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Authenticate(ctx, "ops", "wrong"); !errors.Is(err, ErrInvalidClient) {
		t.Fatal(err)
	}
	if n := len(c.verified.entries); n != 1 {
		t.Fatalf("%d cache entries, want 1 (only the verified secret)", n)
	}
	sum := sha256.Sum256([]byte("demo-secret"))
	for k := range c.verified.entries {
		if k == sum || bytes.Contains(k[:], []byte("demo")) {
			t.Fatal("cache entry derived from the secret without the process key")
		}
	}
	// Take every slot: only the cache can answer now.
	for range cap(argon2Slots) {
		argon2Slots <- struct{}{}
	}
	defer func() {
		for range cap(argon2Slots) {
			<-argon2Slots
		}
	}()
	if _, err := c.Authenticate(ctx, "ops", "demo-secret"); err != nil {
		t.Fatalf("cache hit: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Authenticate(short, "ops", "not-cached"); err == nil || errors.Is(err, ErrInvalidClient) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cache miss with no slot: %v, want the context's error", err)
	}
}

// TestParseArgon2id: the stored-form parser refuses anything but a
// well-formed v=19 string with bounded costs.
func TestParseArgon2id(t *testing.T) {
	good := string(hashOperatorSecret("x", cheap))
	if _, err := parseArgon2id([]byte(good)); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	salt, key := "c2FsdHNhbHRzYWx0c2FsdA", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	for _, bad := range []string{
		"", "$argon2id$", "$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=18$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,m=1$" + salt + "$" + key,
		"$argon2id$v=19$m=4294967295,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=99,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"$argon2id$v=19$m=064,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=+64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "=$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
		"$argon2id$v=19$m=64,t=1,p=1$$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$a2V5",
		strings.Replace(good, "$v=19", "$v=19$", 1),
	} {
		if _, err := parseArgon2id([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
		if ok, _ := argon2Matches(context.Background(), []byte(bad), "x"); ok {
			t.Errorf("%q matched", bad)
		}
	}
}

// TestBootstrapSecretCachedAtStart: the bootstrap secret hashed at start
// is known to match its stored form, so the first token request is a
// cache hit: no second Argon2id (19 MiB of memory held by the process
// afterwards, ~160 ms). Shown with every verification slot taken.
func TestBootstrapSecretCachedAtStart(t *testing.T) {
	ctx := context.Background()
	c := NewClients(memory.NewIAMStores().Clients, false)
	c.password = cheap
	if err := c.EnsureBootstrap(ctx, "boot", "boot-secret", "t1", "boot", []string{RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	for range cap(argon2Slots) {
		argon2Slots <- struct{}{}
	}
	defer func() {
		for range cap(argon2Slots) {
			<-argon2Slots
		}
	}()
	if _, err := c.Authenticate(ctx, "boot", "boot-secret"); err != nil {
		t.Fatalf("first token request after start: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Authenticate(short, "boot", "other-secret"); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wrong secret must still need Argon2id: %v", err)
	}
}
