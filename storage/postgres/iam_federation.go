package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// TrustedKeys is the PostgreSQL storage.TrustedKeys.
type TrustedKeys struct{ db *DB }

// TrustedKeys returns the trusted-key store of db.
func (db *DB) TrustedKeys() *TrustedKeys { return &TrustedKeys{db} }

// OIDCProviders is the PostgreSQL storage.OIDCProviders.
type OIDCProviders struct{ db *DB }

// OIDCProviders returns the provider store of db.
func (db *DB) OIDCProviders() *OIDCProviders { return &OIDCProviders{db} }

// fedInTx runs fn in a transaction on a pooled connection.
func (db *DB) fedInTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	c, err := db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// fedLock serialises writers of one scope (a tenant's trusted keys, one
// provider URI) so count-then-write rules cannot race.
func fedLock(ctx context.Context, tx pgx.Tx, scope string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, scope); err != nil {
		return fmt.Errorf("postgres: advisory lock: %w", err)
	}
	return nil
}

const trustedCols = `kid, tenant, jwk, audience, issuers, active, valid_from, valid_to, created_at, updated_at`

func scanTrusted(row pgx.Row) (*storage.TrustedKey, error) {
	var k storage.TrustedKey
	var jwk string
	err := row.Scan(&k.KID, &k.Tenant, &jwk, &k.Audience, &k.Issuers, &k.Active, &k.ValidFrom, &k.ValidTo, &k.CreatedAt, &k.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	k.JWK = []byte(jwk)
	return &k, nil
}

func collectTrusted(rows pgx.Rows) ([]*storage.TrustedKey, error) {
	defer rows.Close()
	out := []*storage.TrustedKey{}
	for rows.Next() {
		k, err := scanTrusted(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func (s *TrustedKeys) GetTrustedKey(ctx context.Context, tenant, kid string) (*storage.TrustedKey, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	k, err := scanTrusted(c.QueryRow(ctx, `SELECT `+trustedCols+` FROM iam_trusted_keys WHERE kid = $1 AND tenant = $2`, kid, tenant))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: get trusted key: %w", err)
	}
	return k, err
}

func (s *TrustedKeys) list(ctx context.Context, where string, args ...any) ([]*storage.TrustedKey, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+trustedCols+` FROM iam_trusted_keys `+where+` ORDER BY kid`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list trusted keys: %w", err)
	}
	out, err := collectTrusted(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list trusted keys: %w", err)
	}
	return out, nil
}

func (s *TrustedKeys) ListTrustedKeys(ctx context.Context, tenant string) ([]*storage.TrustedKey, error) {
	return s.list(ctx, `WHERE tenant = $1`, tenant)
}

func (s *TrustedKeys) ListAllTrustedKeys(ctx context.Context) ([]*storage.TrustedKey, error) {
	return s.list(ctx, ``)
}

func (s *TrustedKeys) PutTrustedKey(ctx context.Context, k *storage.TrustedKey, opt storage.TrustedKeyPut) error {
	return s.db.fedInTx(ctx, func(tx pgx.Tx) error {
		if err := fedLock(ctx, tx, "trusted:"+k.Tenant); err != nil {
			return err
		}
		var owner string
		switch err := tx.QueryRow(ctx, `SELECT tenant FROM iam_trusted_keys WHERE kid = $1 FOR UPDATE`, k.KID).Scan(&owner); {
		case err == nil && owner != k.Tenant:
			return storage.ErrOwnedByOtherTenant
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("postgres: put trusted key: %w", err)
		}
		if opt.Cap > 0 {
			var usable int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM iam_trusted_keys
				WHERE tenant = $1 AND kid <> $2 AND active AND valid_to > $3`, k.Tenant, k.KID, opt.Now).Scan(&usable); err != nil {
				return fmt.Errorf("postgres: put trusted key: %w", err)
			}
			if usable >= opt.Cap {
				return storage.ErrCapReached
			}
		}
		// The WHERE on the conflict arm keeps a concurrent registration by
		// another tenant from being overwritten.
		var created time.Time
		err := tx.QueryRow(ctx, `INSERT INTO iam_trusted_keys (`+trustedCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
			ON CONFLICT (kid) DO UPDATE SET jwk = EXCLUDED.jwk, audience = EXCLUDED.audience, issuers = EXCLUDED.issuers,
				active = EXCLUDED.active, valid_from = EXCLUDED.valid_from, valid_to = EXCLUDED.valid_to, updated_at = EXCLUDED.updated_at
			WHERE iam_trusted_keys.tenant = EXCLUDED.tenant
			RETURNING created_at`,
			k.KID, k.Tenant, string(k.JWK), k.Audience, k.Issuers, k.Active, k.ValidFrom, k.ValidTo, k.CreatedAt, k.UpdatedAt).Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrOwnedByOtherTenant
		}
		if err != nil {
			return fmt.Errorf("postgres: put trusted key: %w", err)
		}
		k.CreatedAt = created
		if opt.RetireOthersUntil != nil {
			if _, err := tx.Exec(ctx, `UPDATE iam_trusted_keys SET active = false, valid_to = LEAST(valid_to, $4), updated_at = $5
				WHERE tenant = $1 AND kid <> $2 AND active AND audience = $3`,
				k.Tenant, k.KID, k.Audience, *opt.RetireOthersUntil, opt.Now); err != nil {
				return fmt.Errorf("postgres: retiring trusted keys: %w", err)
			}
		}
		return nil
	})
}

func (s *TrustedKeys) UpdateTrustedKey(ctx context.Context, tenant, kid string, fn func(*storage.TrustedKey, []*storage.TrustedKey) error) (*storage.TrustedKey, error) {
	var out *storage.TrustedKey
	err := s.db.fedInTx(ctx, func(tx pgx.Tx) error {
		if err := fedLock(ctx, tx, "trusted:"+tenant); err != nil {
			return err
		}
		k, err := scanTrusted(tx.QueryRow(ctx, `SELECT `+trustedCols+` FROM iam_trusted_keys WHERE kid = $1 AND tenant = $2 FOR UPDATE`, kid, tenant))
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return fmt.Errorf("postgres: update trusted key: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT `+trustedCols+` FROM iam_trusted_keys WHERE tenant = $1 AND kid <> $2 ORDER BY kid`, tenant, kid)
		if err != nil {
			return fmt.Errorf("postgres: update trusted key: %w", err)
		}
		others, err := collectTrusted(rows)
		if err != nil {
			return fmt.Errorf("postgres: update trusted key: %w", err)
		}
		if err := fn(k, others); err != nil {
			return err
		}
		k.KID, k.Tenant = kid, tenant
		if _, err := tx.Exec(ctx, `UPDATE iam_trusted_keys SET jwk = $3, audience = $4, issuers = $5, active = $6,
			valid_from = $7, valid_to = $8, updated_at = $9 WHERE kid = $1 AND tenant = $2`,
			kid, tenant, string(k.JWK), k.Audience, k.Issuers, k.Active, k.ValidFrom, k.ValidTo, k.UpdatedAt); err != nil {
			return fmt.Errorf("postgres: update trusted key: %w", err)
		}
		out = k
		return nil
	})
	return out, err
}

func (s *TrustedKeys) DeleteTrustedKey(ctx context.Context, tenant, kid string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM iam_trusted_keys WHERE kid = $1 AND tenant = $2`, kid, tenant)
	if err != nil {
		return fmt.Errorf("postgres: delete trusted key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}

const providerCols = `id, tenant, well_known_uri, issuers, audiences, roles_claim, invalidated_at, created_at, updated_at`

func scanProvider(row pgx.Row) (*storage.OIDCProvider, error) {
	var p storage.OIDCProvider
	err := row.Scan(&p.ID, &p.Tenant, &p.WellKnownURI, &p.Issuers, &p.Audiences, &p.RolesClaim, &p.InvalidatedAt, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func collectProviders(rows pgx.Rows) ([]*storage.OIDCProvider, error) {
	defer rows.Close()
	out := []*storage.OIDCProvider{}
	for rows.Next() {
		p, err := scanProvider(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *OIDCProviders) GetProvider(ctx context.Context, tenant, id string) (*storage.OIDCProvider, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	p, err := scanProvider(c.QueryRow(ctx, `SELECT `+providerCols+` FROM iam_oidc_providers WHERE id = $1 AND tenant = $2`, id, tenant))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: get provider: %w", err)
	}
	return p, err
}

// Providers are listed by (tenant, URI, id): verification relies on the
// order to be deterministic.
func (s *OIDCProviders) list(ctx context.Context, where string, args ...any) ([]*storage.OIDCProvider, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+providerCols+` FROM iam_oidc_providers `+where+` ORDER BY tenant, well_known_uri, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list providers: %w", err)
	}
	out, err := collectProviders(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list providers: %w", err)
	}
	return out, nil
}

func (s *OIDCProviders) ListProviders(ctx context.Context, tenant string) ([]*storage.OIDCProvider, error) {
	return s.list(ctx, `WHERE tenant = $1`, tenant)
}

func (s *OIDCProviders) ListAllProviders(ctx context.Context) ([]*storage.OIDCProvider, error) {
	return s.list(ctx, ``)
}

func sameURI(ctx context.Context, tx pgx.Tx, uri, exceptID string) ([]*storage.OIDCProvider, error) {
	rows, err := tx.Query(ctx, `SELECT `+providerCols+` FROM iam_oidc_providers WHERE well_known_uri = $1 AND id <> $2
		ORDER BY tenant, well_known_uri, id`, uri, exceptID)
	if err != nil {
		return nil, err
	}
	return collectProviders(rows)
}

func (s *OIDCProviders) CreateProvider(ctx context.Context, p *storage.OIDCProvider, check func([]*storage.OIDCProvider) error) error {
	return s.db.fedInTx(ctx, func(tx pgx.Tx) error {
		if err := fedLock(ctx, tx, "oidc:"+p.WellKnownURI); err != nil {
			return err
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM iam_oidc_providers WHERE id = $1 OR (tenant = $2 AND well_known_uri = $3))`,
			p.ID, p.Tenant, p.WellKnownURI).Scan(&taken); err != nil {
			return fmt.Errorf("postgres: create provider: %w", err)
		}
		if taken {
			return storage.ErrExists
		}
		if check != nil {
			same, err := sameURI(ctx, tx, p.WellKnownURI, p.ID)
			if err != nil {
				return fmt.Errorf("postgres: create provider: %w", err)
			}
			if err := check(same); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `INSERT INTO iam_oidc_providers (`+providerCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) ON CONFLICT DO NOTHING`,
			p.ID, p.Tenant, p.WellKnownURI, p.Issuers, p.Audiences, p.RolesClaim, p.InvalidatedAt, p.CreatedAt, p.UpdatedAt)
		if err != nil {
			return fmt.Errorf("postgres: create provider: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrExists
		}
		return nil
	})
}

func (s *OIDCProviders) UpdateProvider(ctx context.Context, tenant, id string, fn func(*storage.OIDCProvider, []*storage.OIDCProvider) error) (*storage.OIDCProvider, error) {
	var out *storage.OIDCProvider
	err := s.db.fedInTx(ctx, func(tx pgx.Tx) error {
		cur, err := scanProvider(tx.QueryRow(ctx, `SELECT `+providerCols+` FROM iam_oidc_providers WHERE id = $1 AND tenant = $2`, id, tenant))
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return fmt.Errorf("postgres: update provider: %w", err)
		}
		// Same lock order as CreateProvider (URI first, then the row).
		if err := fedLock(ctx, tx, "oidc:"+cur.WellKnownURI); err != nil {
			return err
		}
		cur, err = scanProvider(tx.QueryRow(ctx, `SELECT `+providerCols+` FROM iam_oidc_providers WHERE id = $1 AND tenant = $2 FOR UPDATE`, id, tenant))
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return fmt.Errorf("postgres: update provider: %w", err)
		}
		same, err := sameURI(ctx, tx, cur.WellKnownURI, id)
		if err != nil {
			return fmt.Errorf("postgres: update provider: %w", err)
		}
		p := *cur
		if err := fn(&p, same); err != nil {
			return err
		}
		// Identity, ownership and the URI are not the caller's to change.
		p.ID, p.Tenant, p.WellKnownURI, p.CreatedAt = id, tenant, cur.WellKnownURI, cur.CreatedAt
		if _, err := tx.Exec(ctx, `UPDATE iam_oidc_providers SET issuers = $3, audiences = $4, roles_claim = $5,
			invalidated_at = $6, updated_at = $7 WHERE id = $1 AND tenant = $2`,
			id, tenant, p.Issuers, p.Audiences, p.RolesClaim, p.InvalidatedAt, p.UpdatedAt); err != nil {
			return fmt.Errorf("postgres: update provider: %w", err)
		}
		out = &p
		return nil
	})
	return out, err
}

func (s *OIDCProviders) DeleteProvider(ctx context.Context, tenant, id string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM iam_oidc_providers WHERE id = $1 AND tenant = $2`, id, tenant)
	if err != nil {
		return fmt.Errorf("postgres: delete provider: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}

var (
	_ storage.TrustedKeys   = (*TrustedKeys)(nil)
	_ storage.OIDCProviders = (*OIDCProviders)(nil)
)
