package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// NewIAMStores returns empty in-memory IAM stores.
func NewIAMStores() storage.IAMStores {
	return storage.IAMStores{
		Clients:     &Clients{m: map[string]*storage.M2MClient{}},
		Keypairs:    &Keypairs{m: map[string]*storage.Keypair{}},
		TrustedKeys: &TrustedKeys{m: map[string]*storage.TrustedKey{}},
		Providers:   &Providers{m: map[string]*storage.OIDCProvider{}},
		Revocations: NewRevokedTokens(),
	}
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

// Clients is the in-memory storage.M2MClients, keyed by client id.
type Clients struct {
	mu sync.RWMutex
	m  map[string]*storage.M2MClient
}

func cloneClient(c *storage.M2MClient) *storage.M2MClient {
	d := *c
	d.Roles = cloneStrings(c.Roles)
	d.SecretHash = append([]byte(nil), c.SecretHash...)
	return &d
}

func (s *Clients) LookupClient(_ context.Context, id string) (*storage.M2MClient, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.m[id]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return cloneClient(c), nil
}

func (s *Clients) ListClients(_ context.Context, tenant string) ([]*storage.M2MClient, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []*storage.M2MClient{}
	for _, c := range s.m {
		if c.Tenant == tenant {
			out = append(out, cloneClient(c))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ClientID < out[j].ClientID
	})
	return out, nil
}

func (s *Clients) CreateClient(_ context.Context, c *storage.M2MClient) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[c.ClientID]; ok {
		return storage.ErrExists
	}
	s.m[c.ClientID] = cloneClient(c)
	return nil
}

func (s *Clients) UpsertClient(_ context.Context, c *storage.M2MClient) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[c.ClientID] = cloneClient(c)
	return nil
}

func (s *Clients) SetClientSecret(_ context.Context, tenant, id string, hash []byte, at time.Time) (*storage.M2MClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[id]
	if !ok || c.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	c.SecretHash = append([]byte(nil), hash...)
	c.UpdatedAt = at
	return cloneClient(c), nil
}

func (s *Clients) DeleteClient(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[id]
	if !ok || c.Tenant != tenant {
		return storage.ErrNotFound
	}
	delete(s.m, id)
	return nil
}

// Keypairs is the in-memory storage.Keypairs, keyed by kid.
type Keypairs struct {
	mu sync.RWMutex
	m  map[string]*storage.Keypair
}

func cloneKeypair(k *storage.Keypair) *storage.Keypair {
	d := *k
	d.PublicSPKI = append([]byte(nil), k.PublicSPKI...)
	if k.PrivateSealed != nil {
		d.PrivateSealed = append([]byte(nil), k.PrivateSealed...)
	}
	return &d
}

func (s *Keypairs) GetKeypair(_ context.Context, kid string) (*storage.Keypair, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.m[kid]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return cloneKeypair(k), nil
}

func (s *Keypairs) ListKeypairs(context.Context) ([]*storage.Keypair, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*storage.Keypair, 0, len(s.m))
	for _, k := range s.m {
		out = append(out, cloneKeypair(k))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KID < out[j].KID })
	return out, nil
}

func (s *Keypairs) CreateKeypair(_ context.Context, k *storage.Keypair, retireUntil *time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k.KID]; ok {
		return storage.ErrExists
	}
	s.m[k.KID] = cloneKeypair(k)
	if retireUntil == nil {
		return nil
	}
	for kid, o := range s.m {
		if kid == k.KID || !o.Active || o.Audience != k.Audience {
			continue
		}
		o.Active = false
		if retireUntil.Before(o.ValidTo) {
			o.ValidTo = *retireUntil
		}
	}
	return nil
}

func (s *Keypairs) UpdateKeypair(_ context.Context, kid string, fn func(*storage.Keypair) error) (*storage.Keypair, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[kid]
	if !ok {
		return nil, storage.ErrNotFound
	}
	k := cloneKeypair(cur)
	if err := fn(k); err != nil {
		return nil, err
	}
	k.KID = kid
	s.m[kid] = cloneKeypair(k)
	return k, nil
}

func (s *Keypairs) DeleteKeypair(_ context.Context, kid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[kid]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m, kid)
	return nil
}

// TrustedKeys is the in-memory storage.TrustedKeys, keyed by the global kid.
type TrustedKeys struct {
	mu sync.RWMutex
	m  map[string]*storage.TrustedKey
}

func cloneTrusted(k *storage.TrustedKey) *storage.TrustedKey {
	d := *k
	d.JWK = append([]byte(nil), k.JWK...)
	d.Issuers = cloneStrings(k.Issuers)
	return &d
}

func (s *TrustedKeys) GetTrustedKey(_ context.Context, tenant, kid string) (*storage.TrustedKey, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.m[kid]
	if !ok || k.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	return cloneTrusted(k), nil
}

func (s *TrustedKeys) list(keep func(*storage.TrustedKey) bool) []*storage.TrustedKey {
	out := []*storage.TrustedKey{}
	for _, k := range s.m {
		if keep(k) {
			out = append(out, cloneTrusted(k))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KID < out[j].KID })
	return out
}

func (s *TrustedKeys) ListTrustedKeys(_ context.Context, tenant string) ([]*storage.TrustedKey, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list(func(k *storage.TrustedKey) bool { return k.Tenant == tenant }), nil
}

func (s *TrustedKeys) ListAllTrustedKeys(context.Context) ([]*storage.TrustedKey, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list(func(*storage.TrustedKey) bool { return true }), nil
}

func (s *TrustedKeys) PutTrustedKey(_ context.Context, k *storage.TrustedKey, opt storage.TrustedKeyPut) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[k.KID]; ok && cur.Tenant != k.Tenant {
		return storage.ErrOwnedByOtherTenant
	}
	if opt.Cap > 0 {
		usable := 0
		for kid, o := range s.m {
			if kid != k.KID && o.Tenant == k.Tenant && o.Usable(opt.Now) {
				usable++
			}
		}
		if usable >= opt.Cap {
			return storage.ErrCapReached
		}
	}
	if cur, ok := s.m[k.KID]; ok {
		k.CreatedAt = cur.CreatedAt
	}
	s.m[k.KID] = cloneTrusted(k)
	if opt.RetireOthersUntil == nil {
		return nil
	}
	for kid, o := range s.m {
		if kid == k.KID || o.Tenant != k.Tenant || !o.Active || o.Audience != k.Audience {
			continue
		}
		o.Active = false
		if opt.RetireOthersUntil.Before(o.ValidTo) {
			o.ValidTo = *opt.RetireOthersUntil
		}
		o.UpdatedAt = opt.Now
	}
	return nil
}

func (s *TrustedKeys) UpdateTrustedKey(_ context.Context, tenant, kid string, fn func(*storage.TrustedKey, []*storage.TrustedKey) error) (*storage.TrustedKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[kid]
	if !ok || cur.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	others := s.list(func(o *storage.TrustedKey) bool { return o.Tenant == tenant && o.KID != kid })
	k := cloneTrusted(cur)
	if err := fn(k, others); err != nil {
		return nil, err
	}
	k.KID, k.Tenant = kid, tenant
	s.m[kid] = cloneTrusted(k)
	return k, nil
}

func (s *TrustedKeys) DeleteTrustedKey(_ context.Context, tenant, kid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.m[kid]
	if !ok || k.Tenant != tenant {
		return storage.ErrNotFound
	}
	delete(s.m, kid)
	return nil
}

// Providers is the in-memory storage.OIDCProviders, keyed by provider id.
type Providers struct {
	mu sync.RWMutex
	m  map[string]*storage.OIDCProvider
}

func cloneProvider(p *storage.OIDCProvider) *storage.OIDCProvider {
	d := *p
	d.Issuers = cloneStrings(p.Issuers)
	d.Audiences = cloneStrings(p.Audiences)
	if p.RolesClaim != nil {
		rc := *p.RolesClaim
		d.RolesClaim = &rc
	}
	if p.InvalidatedAt != nil {
		at := *p.InvalidatedAt
		d.InvalidatedAt = &at
	}
	return &d
}

func (s *Providers) GetProvider(_ context.Context, tenant, id string) (*storage.OIDCProvider, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.m[id]
	if !ok || p.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	return cloneProvider(p), nil
}

// list returns matching providers ordered by (tenant, URI, id), the order
// verification relies on to be deterministic.
func (s *Providers) list(keep func(*storage.OIDCProvider) bool) []*storage.OIDCProvider {
	out := []*storage.OIDCProvider{}
	for _, p := range s.m {
		if keep(p) {
			out = append(out, cloneProvider(p))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.WellKnownURI != b.WellKnownURI {
			return a.WellKnownURI < b.WellKnownURI
		}
		return a.ID < b.ID
	})
	return out
}

func (s *Providers) ListProviders(_ context.Context, tenant string) ([]*storage.OIDCProvider, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list(func(p *storage.OIDCProvider) bool { return p.Tenant == tenant }), nil
}

func (s *Providers) ListAllProviders(context.Context) ([]*storage.OIDCProvider, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list(func(*storage.OIDCProvider) bool { return true }), nil
}

func (s *Providers) CreateProvider(_ context.Context, p *storage.OIDCProvider, check func([]*storage.OIDCProvider) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[p.ID]; ok {
		return storage.ErrExists
	}
	for _, o := range s.m {
		if o.Tenant == p.Tenant && o.WellKnownURI == p.WellKnownURI {
			return storage.ErrExists
		}
	}
	if check != nil {
		same := s.list(func(o *storage.OIDCProvider) bool { return o.WellKnownURI == p.WellKnownURI })
		if err := check(same); err != nil {
			return err
		}
	}
	s.m[p.ID] = cloneProvider(p)
	return nil
}

func (s *Providers) UpdateProvider(_ context.Context, tenant, id string, fn func(*storage.OIDCProvider, []*storage.OIDCProvider) error) (*storage.OIDCProvider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[id]
	if !ok || cur.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	same := s.list(func(o *storage.OIDCProvider) bool { return o.WellKnownURI == cur.WellKnownURI && o.ID != id })
	p := cloneProvider(cur)
	if err := fn(p, same); err != nil {
		return nil, err
	}
	// Identity, ownership and the URI are not the caller's to change.
	p.ID, p.Tenant, p.WellKnownURI, p.CreatedAt = id, tenant, cur.WellKnownURI, cur.CreatedAt
	s.m[id] = cloneProvider(p)
	return p, nil
}

func (s *Providers) DeleteProvider(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	if !ok || p.Tenant != tenant {
		return storage.ErrNotFound
	}
	delete(s.m, id)
	return nil
}
