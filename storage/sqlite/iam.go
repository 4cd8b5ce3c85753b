package sqlite

import (
	"context"
	"errors"
	"sort"
	"time"

	"svc/storage"
)

// IAMStores returns the jwt-mode stores of db, kept as records
// (records.go).
func (db *DB) IAMStores() storage.IAMStores {
	return storage.IAMStores{Clients: &Clients{db}, Keypairs: &Keypairs{db}, TrustedKeys: &TrustedKeys{db},
		Providers: &Providers{db}, Revocations: &RevokedTokens{db}}
}

// Clients is the SQLite storage.M2MClients, keyed by the global client id.
type Clients struct{ db *DB }

func (s *Clients) LookupClient(ctx context.Context, id string) (*storage.M2MClient, error) {
	return getRecord[storage.M2MClient](ctx, s.db, kindClient, id)
}

func (s *Clients) ListClients(ctx context.Context, tenant string) ([]*storage.M2MClient, error) {
	out, err := listRecords[storage.M2MClient](ctx, s.db, kindClient, &tenant)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ClientID < out[j].ClientID
	})
	return out, nil
}

func (s *Clients) CreateClient(ctx context.Context, c *storage.M2MClient) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		if _, err := wgetRecord[storage.M2MClient](w, kindClient, c.ClientID); err == nil {
			return storage.ErrExists
		} else if !errors.Is(err, errNotFound) {
			return err
		}
		return wputRecord(w, kindClient, c.ClientID, c.Tenant, c)
	})
}

func (s *Clients) UpsertClient(ctx context.Context, c *storage.M2MClient) error {
	return s.db.w.write(ctx, func(w *wtx) error { return wputRecord(w, kindClient, c.ClientID, c.Tenant, c) })
}

func (s *Clients) SetClientSecret(ctx context.Context, tenant, id string, hash []byte, at time.Time) (*storage.M2MClient, error) {
	var out *storage.M2MClient
	err := s.db.w.write(ctx, func(w *wtx) error {
		c, err := wgetRecord[storage.M2MClient](w, kindClient, id)
		if err != nil {
			return err
		}
		if c.Tenant != tenant {
			return storage.ErrNotFound
		}
		c.SecretHash = append([]byte(nil), hash...)
		c.UpdatedAt = at
		out = c
		return wputRecord(w, kindClient, id, c.Tenant, c)
	})
	return out, err
}

func (s *Clients) DeleteClient(ctx context.Context, tenant, id string) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		c, err := wgetRecord[storage.M2MClient](w, kindClient, id)
		if err != nil {
			return err
		}
		if c.Tenant != tenant {
			return storage.ErrNotFound
		}
		return wdelRecord(w, kindClient, id)
	})
}

// Keypairs is the SQLite storage.Keypairs, keyed by kid; keypairs are
// global (tenant "").
type Keypairs struct{ db *DB }

func (s *Keypairs) GetKeypair(ctx context.Context, kid string) (*storage.Keypair, error) {
	return getRecord[storage.Keypair](ctx, s.db, kindKeypair, kid)
}

func (s *Keypairs) ListKeypairs(ctx context.Context) ([]*storage.Keypair, error) {
	return listRecords[storage.Keypair](ctx, s.db, kindKeypair, nil)
}

func (s *Keypairs) CreateKeypair(ctx context.Context, k *storage.Keypair, retireUntil *time.Time) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		if _, err := wgetRecord[storage.Keypair](w, kindKeypair, k.KID); err == nil {
			return storage.ErrExists
		} else if !errors.Is(err, errNotFound) {
			return err
		}
		if err := wputRecord(w, kindKeypair, k.KID, "", k); err != nil {
			return err
		}
		if retireUntil == nil {
			return nil
		}
		all, err := wlistRecords[storage.Keypair](w, kindKeypair, nil)
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.KID == k.KID || !o.Active || o.Audience != k.Audience {
				continue
			}
			o.Active = false
			if retireUntil.Before(o.ValidTo) {
				o.ValidTo = *retireUntil
			}
			if err := wputRecord(w, kindKeypair, o.KID, "", o); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Keypairs) UpdateKeypair(ctx context.Context, kid string, fn func(*storage.Keypair) error) (*storage.Keypair, error) {
	var out *storage.Keypair
	err := s.db.w.write(ctx, func(w *wtx) error {
		k, err := wgetRecord[storage.Keypair](w, kindKeypair, kid)
		if err != nil {
			return err
		}
		if err := fn(k); err != nil {
			return err
		}
		k.KID = kid
		out = k
		return wputRecord(w, kindKeypair, kid, "", k)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Keypairs) DeleteKeypair(ctx context.Context, kid string) error {
	return s.db.w.write(ctx, func(w *wtx) error { return wdelRecord(w, kindKeypair, kid) })
}

// TrustedKeys is the SQLite storage.TrustedKeys, keyed by the global kid.
type TrustedKeys struct{ db *DB }

func (s *TrustedKeys) GetTrustedKey(ctx context.Context, tenant, kid string) (*storage.TrustedKey, error) {
	k, err := getRecord[storage.TrustedKey](ctx, s.db, kindTrustedKey, kid)
	if err != nil {
		return nil, err
	}
	if k.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	return k, nil
}

func (s *TrustedKeys) ListTrustedKeys(ctx context.Context, tenant string) ([]*storage.TrustedKey, error) {
	return listRecords[storage.TrustedKey](ctx, s.db, kindTrustedKey, &tenant)
}

func (s *TrustedKeys) ListAllTrustedKeys(ctx context.Context) ([]*storage.TrustedKey, error) {
	return listRecords[storage.TrustedKey](ctx, s.db, kindTrustedKey, nil)
}

func (s *TrustedKeys) PutTrustedKey(ctx context.Context, k *storage.TrustedKey, opt storage.TrustedKeyPut) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		cur, err := wgetRecord[storage.TrustedKey](w, kindTrustedKey, k.KID)
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		if cur != nil && cur.Tenant != k.Tenant {
			return storage.ErrOwnedByOtherTenant
		}
		mine, err := wlistRecords[storage.TrustedKey](w, kindTrustedKey, &k.Tenant)
		if err != nil {
			return err
		}
		if opt.Cap > 0 {
			usable := 0
			for _, o := range mine {
				if o.KID != k.KID && o.Usable(opt.Now) {
					usable++
				}
			}
			if usable >= opt.Cap {
				return storage.ErrCapReached
			}
		}
		if cur != nil {
			k.CreatedAt = cur.CreatedAt
		}
		if err := wputRecord(w, kindTrustedKey, k.KID, k.Tenant, k); err != nil {
			return err
		}
		if opt.RetireOthersUntil == nil {
			return nil
		}
		for _, o := range mine {
			if o.KID == k.KID || !o.Active || o.Audience != k.Audience {
				continue
			}
			o.Active = false
			if opt.RetireOthersUntil.Before(o.ValidTo) {
				o.ValidTo = *opt.RetireOthersUntil
			}
			o.UpdatedAt = opt.Now
			if err := wputRecord(w, kindTrustedKey, o.KID, o.Tenant, o); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *TrustedKeys) UpdateTrustedKey(ctx context.Context, tenant, kid string, fn func(*storage.TrustedKey, []*storage.TrustedKey) error) (*storage.TrustedKey, error) {
	var out *storage.TrustedKey
	err := s.db.w.write(ctx, func(w *wtx) error {
		k, err := wgetRecord[storage.TrustedKey](w, kindTrustedKey, kid)
		if err != nil {
			return err
		}
		if k.Tenant != tenant {
			return storage.ErrNotFound
		}
		mine, err := wlistRecords[storage.TrustedKey](w, kindTrustedKey, &tenant)
		if err != nil {
			return err
		}
		others := mine[:0]
		for _, o := range mine {
			if o.KID != kid {
				others = append(others, o)
			}
		}
		if err := fn(k, others); err != nil {
			return err
		}
		k.KID, k.Tenant = kid, tenant
		out = k
		return wputRecord(w, kindTrustedKey, kid, tenant, k)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *TrustedKeys) DeleteTrustedKey(ctx context.Context, tenant, kid string) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		k, err := wgetRecord[storage.TrustedKey](w, kindTrustedKey, kid)
		if err != nil {
			return err
		}
		if k.Tenant != tenant {
			return storage.ErrNotFound
		}
		return wdelRecord(w, kindTrustedKey, kid)
	})
}

// Providers is the SQLite storage.OIDCProviders, keyed by provider id.
type Providers struct{ db *DB }

// sortProviders orders providers by (tenant, URI, id), the order
// verification relies on to be deterministic.
func sortProviders(out []*storage.OIDCProvider) []*storage.OIDCProvider {
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

func (s *Providers) GetProvider(ctx context.Context, tenant, id string) (*storage.OIDCProvider, error) {
	p, err := getRecord[storage.OIDCProvider](ctx, s.db, kindProvider, id)
	if err != nil {
		return nil, err
	}
	if p.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	return p, nil
}

func (s *Providers) ListProviders(ctx context.Context, tenant string) ([]*storage.OIDCProvider, error) {
	out, err := listRecords[storage.OIDCProvider](ctx, s.db, kindProvider, &tenant)
	if err != nil {
		return nil, err
	}
	return sortProviders(out), nil
}

func (s *Providers) ListAllProviders(ctx context.Context) ([]*storage.OIDCProvider, error) {
	out, err := listRecords[storage.OIDCProvider](ctx, s.db, kindProvider, nil)
	if err != nil {
		return nil, err
	}
	return sortProviders(out), nil
}

func (s *Providers) CreateProvider(ctx context.Context, p *storage.OIDCProvider, check func([]*storage.OIDCProvider) error) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		all, err := wlistRecords[storage.OIDCProvider](w, kindProvider, nil)
		if err != nil {
			return err
		}
		var same []*storage.OIDCProvider
		for _, o := range all {
			if o.ID == p.ID || (o.Tenant == p.Tenant && o.WellKnownURI == p.WellKnownURI) {
				return storage.ErrExists
			}
			if o.WellKnownURI == p.WellKnownURI {
				same = append(same, o)
			}
		}
		if check != nil {
			if same == nil {
				same = []*storage.OIDCProvider{}
			}
			if err := check(sortProviders(same)); err != nil {
				return err
			}
		}
		return wputRecord(w, kindProvider, p.ID, p.Tenant, p)
	})
}

func (s *Providers) UpdateProvider(ctx context.Context, tenant, id string, fn func(*storage.OIDCProvider, []*storage.OIDCProvider) error) (*storage.OIDCProvider, error) {
	var out *storage.OIDCProvider
	err := s.db.w.write(ctx, func(w *wtx) error {
		all, err := wlistRecords[storage.OIDCProvider](w, kindProvider, nil)
		if err != nil {
			return err
		}
		var cur *storage.OIDCProvider
		for _, o := range all {
			if o.ID == id {
				cur = o
			}
		}
		if cur == nil || cur.Tenant != tenant {
			return storage.ErrNotFound
		}
		same := []*storage.OIDCProvider{}
		for _, o := range all {
			if o.WellKnownURI == cur.WellKnownURI && o.ID != id {
				same = append(same, o)
			}
		}
		p, err := getCopy(cur)
		if err != nil {
			return err
		}
		if err := fn(p, sortProviders(same)); err != nil {
			return err
		}
		// Identity, ownership and the URI are not the caller's to change.
		p.ID, p.Tenant, p.WellKnownURI, p.CreatedAt = id, tenant, cur.WellKnownURI, cur.CreatedAt
		out = p
		return wputRecord(w, kindProvider, id, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// getCopy is a deep copy of p (fn may keep or change what it is given).
func getCopy(p *storage.OIDCProvider) (*storage.OIDCProvider, error) {
	c := *p
	c.Issuers = append([]string(nil), p.Issuers...)
	if p.Issuers == nil {
		c.Issuers = nil
	}
	c.Audiences = append([]string(nil), p.Audiences...)
	if p.Audiences == nil {
		c.Audiences = nil
	}
	if p.RolesClaim != nil {
		rc := *p.RolesClaim
		c.RolesClaim = &rc
	}
	if p.InvalidatedAt != nil {
		at := *p.InvalidatedAt
		c.InvalidatedAt = &at
	}
	return &c, nil
}

func (s *Providers) DeleteProvider(ctx context.Context, tenant, id string) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		p, err := wgetRecord[storage.OIDCProvider](w, kindProvider, id)
		if err != nil {
			return err
		}
		if p.Tenant != tenant {
			return storage.ErrNotFound
		}
		return wdelRecord(w, kindProvider, id)
	})
}

// RevokedTokens is the SQLite storage.RevokedTokens, keyed by jti.
type RevokedTokens struct{ db *DB }

// RevokedTokens returns the revocation store of db.
func (db *DB) RevokedTokens() *RevokedTokens { return &RevokedTokens{db} }

func (s *RevokedTokens) RevokeToken(ctx context.Context, r *storage.RevokedToken) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		cur, err := wgetRecord[storage.RevokedToken](w, kindRevoked, r.JTI)
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		if cur != nil && !r.Until.After(cur.Until) {
			return nil
		}
		return wputRecord(w, kindRevoked, r.JTI, r.Tenant, r)
	})
}

func (s *RevokedTokens) ListRevokedTokens(ctx context.Context, now time.Time) ([]*storage.RevokedToken, error) {
	all, err := listRecords[storage.RevokedToken](ctx, s.db, kindRevoked, nil)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if r.Until.After(now) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *RevokedTokens) PurgeRevokedTokens(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := s.db.w.write(ctx, func(w *wtx) error {
		n = 0
		all, err := wlistRecords[storage.RevokedToken](w, kindRevoked, nil)
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.Until.Before(before) {
				if err := wdelRecord(w, kindRevoked, r.JTI); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, err
}
