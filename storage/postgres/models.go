package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// Models is the PostgreSQL storage.Models.
type Models struct{ db *DB }

// Models returns the model store of db.
func (db *DB) Models() *Models { return &Models{db} }

const modelCols = `tenant, name, version, state, change_level, schema, unique_keys, workflows, created_at, updated_at, revision`

func scanModel(row pgx.Row) (*storage.Model, error) {
	var m storage.Model
	err := row.Scan(&m.Tenant, &m.Key.Name, &m.Key.Version, &m.State, &m.ChangeLevel, &m.Schema, &m.UniqueKeys, &m.Workflows, &m.CreatedAt, &m.UpdatedAt, &m.Revision)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	return &m, err
}

func (s *Models) GetModel(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	m, err := scanModel(c.QueryRow(ctx, `SELECT `+modelCols+` FROM models WHERE tenant = $1 AND name = $2 AND version = $3`, tenant, key.Name, key.Version))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: get model: %w", err)
	}
	return m, err
}

func (s *Models) ListModels(ctx context.Context, tenant string) ([]*storage.Model, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+modelCols+` FROM models WHERE tenant = $1 ORDER BY name, version`, tenant)
	if err != nil {
		return nil, fmt.Errorf("postgres: list models: %w", err)
	}
	defer rows.Close()
	var out []*storage.Model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list models: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (s *Models) PutModel(ctx context.Context, m *storage.Model) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	now := time.Now().UTC()
	var tag interface{ RowsAffected() int64 }
	if m.Revision == 0 {
		tag, err = c.Exec(ctx, `INSERT INTO models (`+modelCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$9,1)
			ON CONFLICT DO NOTHING`,
			m.Tenant, m.Key.Name, m.Key.Version, m.State, m.ChangeLevel, nz(m.Schema), nz(m.UniqueKeys), nz(m.Workflows), now)
	} else {
		tag, err = c.Exec(ctx, `UPDATE models SET state=$4, change_level=$5, schema=$6, unique_keys=$7, workflows=$8, updated_at=$9, revision=revision+1
			WHERE tenant=$1 AND name=$2 AND version=$3 AND revision=$10`,
			m.Tenant, m.Key.Name, m.Key.Version, m.State, m.ChangeLevel, nz(m.Schema), nz(m.UniqueKeys), nz(m.Workflows), now, m.Revision)
	}
	if err != nil {
		return fmt.Errorf("postgres: put model: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return storage.ErrConflict
	}
	if m.Revision == 0 {
		m.CreatedAt = now
	}
	m.UpdatedAt = now
	m.Revision++
	return nil
}

func (s *Models) DeleteModel(ctx context.Context, tenant string, key storage.ModelKey) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM models WHERE tenant=$1 AND name=$2 AND version=$3`, tenant, key.Name, key.Version)
	if err != nil {
		return fmt.Errorf("postgres: delete model: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// nz keeps NOT NULL bytea columns from receiving a nil slice.
func nz(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
