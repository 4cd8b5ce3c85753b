package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"svc/storage"
)

// IAM checks a storage.IAMStores implementation: tenant isolation of every
// store, global uniqueness of client ids and trusted-key ids, and the
// atomic rules (rotation, cap, provider sharing).
func IAM(t *testing.T, newStores func(t *testing.T) storage.IAMStores) {
	t.Run("clients", func(t *testing.T) { iamClients(t, newStores(t).Clients) })
	t.Run("keypairs", func(t *testing.T) { iamKeypairs(t, newStores(t).Keypairs) })
	t.Run("trusted keys", func(t *testing.T) { iamTrustedKeys(t, newStores(t).TrustedKeys) })
	t.Run("oidc providers", func(t *testing.T) { iamProviders(t, newStores(t).Providers) })
}

var bg = context.Background()

func iamClients(t *testing.T, s storage.M2MClients) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := &storage.M2MClient{ClientID: "C1", Tenant: "A", UserID: "C1", Roles: []string{"ROLE_M2M"},
		SecretHash: []byte{1, 2, 3}, CreatedAt: now, UpdatedAt: now}
	if err := s.CreateClient(bg, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(bg, &storage.M2MClient{ClientID: "C1", Tenant: "B"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("client id reused across tenants: %v", err)
	}
	got, err := s.LookupClient(bg, "C1")
	if err != nil || got.Tenant != "A" || string(got.SecretHash) != "\x01\x02\x03" || len(got.Roles) != 1 {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	got.Roles[0] = "ROLE_ADMIN"
	if again, _ := s.LookupClient(bg, "C1"); again.Roles[0] != "ROLE_M2M" {
		t.Fatal("store shares memory with a returned record")
	}
	if l, _ := s.ListClients(bg, "B"); len(l) != 0 {
		t.Fatalf("B lists A's clients: %d", len(l))
	}
	if _, err := s.SetClientSecret(bg, "B", "C1", []byte{9}, now); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("B rotates A's client: %v", err)
	}
	if err := s.DeleteClient(bg, "B", "C1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("B deletes A's client: %v", err)
	}
	later := now.Add(time.Second)
	c, err := s.SetClientSecret(bg, "A", "C1", []byte{9}, later)
	if err != nil || string(c.SecretHash) != "\x09" || !c.UpdatedAt.Equal(later) || !c.CreatedAt.Equal(now) {
		t.Fatalf("rotate: %+v %v", c, err)
	}
	s.CreateClient(bg, &storage.M2MClient{ClientID: "C0", Tenant: "A", CreatedAt: now.Add(time.Second)})
	s.CreateClient(bg, &storage.M2MClient{ClientID: "C2", Tenant: "A", CreatedAt: now})
	l, _ := s.ListClients(bg, "A")
	if len(l) != 3 || l[0].ClientID != "C1" || l[1].ClientID != "C2" || l[2].ClientID != "C0" {
		t.Fatalf("list order (creation, id): %v", clientIDs(l))
	}
	if err := s.UpsertClient(bg, &storage.M2MClient{ClientID: "C1", Tenant: "A", Roles: []string{"X"}}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.LookupClient(bg, "C1"); c.Roles[0] != "X" {
		t.Fatal("upsert did not replace")
	}
	if err := s.DeleteClient(bg, "A", "C1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupClient(bg, "C1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted client still found: %v", err)
	}
}

func clientIDs(l []*storage.M2MClient) []string {
	var out []string
	for _, c := range l {
		out = append(out, c.ClientID)
	}
	return out
}

func iamKeypairs(t *testing.T, s storage.Keypairs) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	year := now.Add(365 * 24 * time.Hour)
	mk := func(kid, aud string) *storage.Keypair {
		return &storage.Keypair{KID: kid, Audience: aud, Algorithm: "RS256", PublicSPKI: []byte(kid),
			PrivateSealed: []byte("sealed-" + kid), Active: true, ValidFrom: now, ValidTo: year, CreatedAt: now}
	}
	if err := s.CreateKeypair(bg, mk("k1", "client"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKeypair(bg, mk("h1", "human"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKeypair(bg, mk("k1", "client"), nil); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("duplicate kid: %v", err)
	}
	grace := now.Add(time.Minute)
	if err := s.CreateKeypair(bg, mk("k2", "client"), &grace); err != nil {
		t.Fatal(err)
	}
	k1, _ := s.GetKeypair(bg, "k1")
	h1, _ := s.GetKeypair(bg, "h1")
	k2, _ := s.GetKeypair(bg, "k2")
	if k1.Active || !k1.ValidTo.Equal(grace) || !h1.Active || !k2.Active || string(k2.PrivateSealed) != "sealed-k2" {
		t.Fatalf("rotation: k1 %+v h1 active %v k2 active %v", k1, h1.Active, k2.Active)
	}
	// Retiring never extends a key's life.
	far := now.Add(1000 * 24 * time.Hour)
	s.CreateKeypair(bg, mk("k3", "client"), &far)
	if k2, _ = s.GetKeypair(bg, "k2"); !k2.ValidTo.Equal(year) || k2.Active {
		t.Fatalf("retire extended validTo: %+v", k2)
	}
	_, err := s.UpdateKeypair(bg, "k3", func(k *storage.Keypair) error { return errors.New("veto") })
	if err == nil || err.Error() != "veto" {
		t.Fatalf("fn error not returned: %v", err)
	}
	k3, err := s.UpdateKeypair(bg, "k3", func(k *storage.Keypair) error { k.Active = false; return nil })
	if err != nil || k3.Active {
		t.Fatalf("update: %+v %v", k3, err)
	}
	if _, err := s.UpdateKeypair(bg, "nope", func(*storage.Keypair) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update absent: %v", err)
	}
	if l, _ := s.ListKeypairs(bg); len(l) != 4 {
		t.Fatalf("list: %d", len(l))
	}
	if err := s.DeleteKeypair(bg, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteKeypair(bg, "k1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}

	// Concurrent rotations leave exactly one active key per audience.
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			until := time.Now()
			if err := s.CreateKeypair(bg, mk(fmt.Sprintf("r%02d", i), "client"), &until); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	active := 0
	l, _ := s.ListKeypairs(bg)
	for _, k := range l {
		if k.Active && k.Audience == "client" {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d active client keypairs after concurrent rotations", active)
	}
}

func iamTrustedKeys(t *testing.T, s storage.TrustedKeys) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	mk := func(kid, tenant string) *storage.TrustedKey {
		return &storage.TrustedKey{KID: kid, Tenant: tenant, JWK: []byte(`{"kty":"RSA"}`), Audience: "client",
			Active: true, ValidFrom: now, ValidTo: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
	}
	put := func(k *storage.TrustedKey, cap int) error {
		return s.PutTrustedKey(bg, k, storage.TrustedKeyPut{Cap: cap, Now: now})
	}
	if err := put(mk("a1", "A"), 2); err != nil {
		t.Fatal(err)
	}
	if err := put(mk("a1", "B"), 2); !errors.Is(err, storage.ErrOwnedByOtherTenant) {
		t.Fatalf("kid taken by A, registered by B: %v", err)
	}
	if _, err := s.GetTrustedKey(bg, "B", "a1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("B reads A's key: %v", err)
	}
	if err := s.DeleteTrustedKey(bg, "B", "a1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("B deletes A's key: %v", err)
	}
	if _, err := s.UpdateTrustedKey(bg, "B", "a1", func(*storage.TrustedKey, []*storage.TrustedKey) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("B updates A's key: %v", err)
	}
	if l, _ := s.ListTrustedKeys(bg, "B"); len(l) != 0 {
		t.Fatalf("B lists A's keys")
	}
	if err := put(mk("a2", "A"), 2); err != nil {
		t.Fatal(err)
	}
	if err := put(mk("a3", "A"), 2); !errors.Is(err, storage.ErrCapReached) {
		t.Fatalf("third key under cap 2: %v", err)
	}
	// An upsert takes no slot, and unusable keys do not count.
	up := mk("a2", "A")
	up.Issuers = []string{"https://iss"}
	if err := put(up, 2); err != nil {
		t.Fatalf("upsert at the cap: %v", err)
	}
	if k, _ := s.GetTrustedKey(bg, "A", "a2"); len(k.Issuers) != 1 {
		t.Fatal("upsert did not replace")
	}
	if _, err := s.UpdateTrustedKey(bg, "A", "a1", func(k *storage.TrustedKey, others []*storage.TrustedKey) error {
		if len(others) != 1 || others[0].KID != "a2" {
			return fmt.Errorf("others = %v", others)
		}
		k.Active = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := put(mk("a3", "A"), 2); err != nil {
		t.Fatalf("inactive key still counted: %v", err)
	}
	if err := put(mk("a4", "A"), 0); err != nil {
		t.Fatalf("cap 0 is unbounded: %v", err)
	}
	// Retiring siblings: same tenant and audience only, after the write.
	b := mk("b1", "B")
	put(b, 0)
	human := mk("a5", "A")
	human.Audience = "human"
	put(human, 0)
	until := now.Add(time.Minute)
	if err := s.PutTrustedKey(bg, mk("a6", "A"), storage.TrustedKeyPut{Now: now, RetireOthersUntil: &until}); err != nil {
		t.Fatal(err)
	}
	for _, kid := range []string{"a2", "a3", "a4"} {
		k, _ := s.GetTrustedKey(bg, "A", kid)
		if k.Active || !k.ValidTo.Equal(until) {
			t.Errorf("%s not retired: %+v", kid, k)
		}
	}
	if k, _ := s.GetTrustedKey(bg, "A", "a6"); !k.Active {
		t.Error("new key retired itself")
	}
	if k, _ := s.GetTrustedKey(bg, "A", "a5"); !k.Active {
		t.Error("other audience retired")
	}
	if k, _ := s.GetTrustedKey(bg, "B", "b1"); !k.Active {
		t.Error("other tenant's key retired")
	}
	all, _ := s.ListAllTrustedKeys(bg)
	if len(all) != 7 {
		t.Errorf("list all: %d", len(all))
	}
	if err := s.DeleteTrustedKey(bg, "A", "a1"); err != nil {
		t.Fatal(err)
	}
	if err := put(mk("a1", "B"), 0); err != nil {
		t.Fatalf("a deleted kid is free again: %v", err)
	}
}

func iamProviders(t *testing.T, s storage.OIDCProviders) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	uri := "https://idp.example/.well-known/openid-configuration"
	mk := func(id, tenant string, aud ...string) *storage.OIDCProvider {
		return &storage.OIDCProvider{ID: id, Tenant: tenant, WellKnownURI: uri, Audiences: aud, CreatedAt: now, UpdatedAt: now}
	}
	if err := s.CreateProvider(bg, mk("p1", "A", "aud-a"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateProvider(bg, mk("p2", "A"), nil); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("same tenant, same URI: %v", err)
	}
	var seen []*storage.OIDCProvider
	veto := errors.New("ambiguous")
	err := s.CreateProvider(bg, mk("p3", "B"), func(same []*storage.OIDCProvider) error { seen = same; return veto })
	if !errors.Is(err, veto) || len(seen) != 1 || seen[0].ID != "p1" {
		t.Fatalf("check: %v %v", err, seen)
	}
	if _, err := s.GetProvider(bg, "B", "p3"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("vetoed provider stored")
	}
	if err := s.CreateProvider(bg, mk("p3", "B", "aud-b"), func([]*storage.OIDCProvider) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetProvider(bg, "B", "p1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("B reads A's provider")
	}
	if err := s.DeleteProvider(bg, "B", "p1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("B deletes A's provider")
	}
	if l, _ := s.ListProviders(bg, "B"); len(l) != 1 || l[0].ID != "p3" {
		t.Fatalf("B's list: %v", l)
	}
	rc := "realm_access.roles"
	p, err := s.UpdateProvider(bg, "A", "p1", func(p *storage.OIDCProvider, same []*storage.OIDCProvider) error {
		if len(same) != 1 || same[0].ID != "p3" {
			return fmt.Errorf("same = %v", same)
		}
		p.RolesClaim = &rc
		p.InvalidatedAt = &now
		p.Tenant = "B" // ignored: ownership is not the caller's to change
		return nil
	})
	if err != nil || p.Tenant != "A" || *p.RolesClaim != rc || p.Active() {
		t.Fatalf("update: %+v %v", p, err)
	}
	if _, err := s.UpdateProvider(bg, "B", "p1", func(*storage.OIDCProvider, []*storage.OIDCProvider) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("B updates A's provider")
	}
	all, _ := s.ListAllProviders(bg)
	if len(all) != 2 || all[0].Tenant != "A" {
		t.Fatalf("list all (sorted by tenant): %v", all)
	}
	if err := s.DeleteProvider(bg, "A", "p1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateProvider(bg, mk("p4", "A"), nil); err != nil {
		t.Fatalf("URI free again after delete: %v", err)
	}
}
