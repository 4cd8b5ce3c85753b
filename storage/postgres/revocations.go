package postgres

import (
	"context"
	"fmt"
	"time"

	"svc/storage"
)

// RevokedTokens is the PostgreSQL storage.RevokedTokens (table
// iam_revoked_token, migration 0016).
type RevokedTokens struct{ db *DB }

// RevokedTokens returns the token-revocation store of db.
func (db *DB) RevokedTokens() *RevokedTokens { return &RevokedTokens{db} }

func (s *RevokedTokens) RevokeToken(ctx context.Context, r *storage.RevokedToken) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, `INSERT INTO iam_revoked_token (jti, tenant, client_id, until, revoked_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (jti) DO UPDATE SET until = EXCLUDED.until WHERE iam_revoked_token.until < EXCLUDED.until`,
		r.JTI, r.Tenant, r.ClientID, r.Until, r.RevokedAt)
	if err != nil {
		return fmt.Errorf("postgres: revoke token: %w", err)
	}
	return nil
}

func (s *RevokedTokens) ListRevokedTokens(ctx context.Context, now time.Time) ([]*storage.RevokedToken, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT jti, tenant, client_id, until, revoked_at FROM iam_revoked_token
WHERE until > $1 ORDER BY jti`, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: list revoked tokens: %w", err)
	}
	defer rows.Close()
	out := []*storage.RevokedToken{}
	for rows.Next() {
		var r storage.RevokedToken
		if err := rows.Scan(&r.JTI, &r.Tenant, &r.ClientID, &r.Until, &r.RevokedAt); err != nil {
			return nil, fmt.Errorf("postgres: list revoked tokens: %w", err)
		}
		r.Until, r.RevokedAt = r.Until.UTC(), r.RevokedAt.UTC()
		out = append(out, &r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list revoked tokens: %w", err)
	}
	return out, nil
}

func (s *RevokedTokens) PurgeRevokedTokens(ctx context.Context, before time.Time) (int, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM iam_revoked_token WHERE until < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("postgres: purge revoked tokens: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
