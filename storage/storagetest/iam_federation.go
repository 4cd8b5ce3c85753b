package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"svc/storage"
)

// IAMFederation checks the trusted-key and OIDC-provider stores alone, for
// engines that provide them before the rest of storage.IAMStores, plus the
// cap under concurrent registrations.
func IAMFederation(t *testing.T, newStores func(t *testing.T) storage.IAMStores) {
	t.Run("trusted keys", func(t *testing.T) { iamTrustedKeys(t, newStores(t).TrustedKeys) })
	t.Run("oidc providers", func(t *testing.T) { iamProviders(t, newStores(t).Providers) })
	t.Run("trusted key cap under concurrency", func(t *testing.T) { trustedCapConcurrent(t, newStores(t).TrustedKeys) })
	t.Run("provider sharing under concurrency", func(t *testing.T) { providerShareConcurrent(t, newStores(t).Providers) })
}

func trustedCapConcurrent(t *testing.T, s storage.TrustedKeys) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	const cap, tries = 3, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, capped := 0, 0
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &storage.TrustedKey{KID: fmt.Sprintf("c%d", i), Tenant: "A", JWK: []byte(`{"kty":"RSA"}`), Audience: "client",
				Active: true, ValidFrom: now, ValidTo: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
			err := s.PutTrustedKey(bg, k, storage.TrustedKeyPut{Cap: cap, Now: now})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, storage.ErrCapReached):
				capped++
			default:
				t.Errorf("put: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != cap || capped != tries-cap {
		t.Fatalf("%d stored, %d refused; want %d and %d", ok, capped, cap, tries-cap)
	}
}

// providerShareConcurrent: two tenants registering one URI at once with
// overlapping audiences must not both succeed.
func providerShareConcurrent(t *testing.T, s storage.OIDCProviders) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	veto := errors.New("overlap")
	check := func(same []*storage.OIDCProvider) error {
		if len(same) > 0 {
			return veto
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &storage.OIDCProvider{ID: fmt.Sprintf("p%d", i), Tenant: fmt.Sprintf("T%d", i), WellKnownURI: "https://shared/.well-known/openid-configuration",
				Audiences: []string{"same"}, CreatedAt: now, UpdatedAt: now}
			errs[i] = s.CreateProvider(bg, p, check)
		}()
	}
	wg.Wait()
	stored := 0
	for _, err := range errs {
		switch {
		case err == nil:
			stored++
		case !errors.Is(err, veto):
			t.Errorf("create: %v", err)
		}
	}
	if stored != 1 {
		t.Fatalf("%d registrations of one URI passed a check that admits only the first", stored)
	}
}
