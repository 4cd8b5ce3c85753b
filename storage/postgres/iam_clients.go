package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/storage"
)

// M2MClients is the PostgreSQL storage.M2MClients (table iam_m2m_client).
type M2MClients struct{ db *DB }

// M2MClients returns the machine-client store of db.
func (db *DB) M2MClients() *M2MClients { return &M2MClients{db} }

const clientCols = `client_id, tenant_id, user_id, roles, secret_sha256, created_at, updated_at`

func scanClient(row pgx.Row) (*storage.M2MClient, error) {
	var c storage.M2MClient
	err := row.Scan(&c.ClientID, &c.Tenant, &c.UserID, &c.Roles, &c.SecretHash, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

func rolesArg(r []string) []string {
	if r == nil {
		return []string{}
	}
	return r
}

func hashArg(h []byte) []byte {
	if h == nil {
		return []byte{}
	}
	return h
}

func (s *M2MClients) LookupClient(ctx context.Context, id string) (*storage.M2MClient, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	m, err := scanClient(c.QueryRow(ctx, `SELECT `+clientCols+` FROM iam_m2m_client WHERE client_id = $1`, id))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: lookup client: %w", err)
	}
	return m, err
}

func (s *M2MClients) ListClients(ctx context.Context, tenant string) ([]*storage.M2MClient, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+clientCols+` FROM iam_m2m_client WHERE tenant_id = $1 ORDER BY created_at, client_id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("postgres: list clients: %w", err)
	}
	defer rows.Close()
	out := []*storage.M2MClient{}
	for rows.Next() {
		m, err := scanClient(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list clients: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func (s *M2MClients) CreateClient(ctx context.Context, m *storage.M2MClient) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, `INSERT INTO iam_m2m_client (`+clientCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
		m.ClientID, m.Tenant, m.UserID, rolesArg(m.Roles), hashArg(m.SecretHash), m.CreatedAt, m.UpdatedAt)
	if isUniqueViolation(err) {
		return storage.ErrExists
	}
	if err != nil {
		return fmt.Errorf("postgres: create client: %w", err)
	}
	return nil
}

func (s *M2MClients) UpsertClient(ctx context.Context, m *storage.M2MClient) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, `INSERT INTO iam_m2m_client (`+clientCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)
		ON CONFLICT (client_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, user_id = EXCLUDED.user_id,
		roles = EXCLUDED.roles, secret_sha256 = EXCLUDED.secret_sha256, created_at = EXCLUDED.created_at,
		updated_at = EXCLUDED.updated_at`,
		m.ClientID, m.Tenant, m.UserID, rolesArg(m.Roles), hashArg(m.SecretHash), m.CreatedAt, m.UpdatedAt)
	if err != nil {
		return fmt.Errorf("postgres: upsert client: %w", err)
	}
	return nil
}

func (s *M2MClients) SetClientSecret(ctx context.Context, tenant, id string, hash []byte, at time.Time) (*storage.M2MClient, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	m, err := scanClient(c.QueryRow(ctx, `UPDATE iam_m2m_client SET secret_sha256 = $3, updated_at = $4
		WHERE client_id = $1 AND tenant_id = $2 RETURNING `+clientCols, id, tenant, hashArg(hash), at))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: rotate client secret: %w", err)
	}
	return m, err
}

func (s *M2MClients) DeleteClient(ctx context.Context, tenant, id string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM iam_m2m_client WHERE client_id = $1 AND tenant_id = $2`, id, tenant)
	if err != nil {
		return fmt.Errorf("postgres: delete client: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}
