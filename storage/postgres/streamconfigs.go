package postgres

import (
	"context"
	"errors"
	"fmt"

	"svc/storage"
)

// StreamConfigs is the PostgreSQL storage.StreamConfigs.
type StreamConfigs struct{ db *DB }

// StreamConfigs returns the stream-data definition store of db.
func (db *DB) StreamConfigs() *StreamConfigs { return &StreamConfigs{db} }

var _ storage.StreamConfigs = (*StreamConfigs)(nil)

func (s *StreamConfigs) exec(ctx context.Context, what, sql string, args ...any) (int64, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, sql, args...)
	if err != nil {
		if me := mapErr(err); errors.Is(me, storage.ErrExists) {
			return 0, me
		}
		return 0, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return tag.RowsAffected(), nil
}

func (s *StreamConfigs) CreateStreamConfig(ctx context.Context, c *storage.StreamConfig) error {
	_, err := s.exec(ctx, "create stream config", `INSERT INTO stream_data_configs
		(tenant, id, name, description, owner, request_class, created_ns, def) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.Tenant, c.ID, c.Name, c.Description, c.Owner, c.RequestClass, c.CreatedAt.UnixNano(), c.Def)
	return err
}

func (s *StreamConfigs) UpdateStreamConfig(ctx context.Context, c *storage.StreamConfig) error {
	n, err := s.exec(ctx, "update stream config", `UPDATE stream_data_configs SET name = $3, description = $4,
		request_class = $5, def = $6 WHERE tenant = $1 AND id = $2`, c.Tenant, c.ID, c.Name, c.Description, c.RequestClass, c.Def)
	if err == nil && n == 0 {
		return storage.ErrNotFound
	}
	return err
}

const streamConfigCols = `tenant, id, name, description, owner, request_class, created_ns, def`

func (s *StreamConfigs) query(ctx context.Context, sql string, args ...any) ([]*storage.StreamConfig, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: stream configs: %w", err)
	}
	defer rows.Close()
	out := []*storage.StreamConfig{}
	for rows.Next() {
		var sc storage.StreamConfig
		var created int64
		if err := rows.Scan(&sc.Tenant, &sc.ID, &sc.Name, &sc.Description, &sc.Owner, &sc.RequestClass, &created, &sc.Def); err != nil {
			return nil, fmt.Errorf("postgres: stream configs: %w", err)
		}
		sc.CreatedAt = unixNano(created)
		out = append(out, &sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: stream configs: %w", err)
	}
	return out, nil
}

func (s *StreamConfigs) GetStreamConfig(ctx context.Context, tenant string, id [16]byte) (*storage.StreamConfig, error) {
	out, err := s.query(ctx, `SELECT `+streamConfigCols+` FROM stream_data_configs WHERE tenant = $1 AND id = $2`, tenant, id)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, storage.ErrNotFound
	}
	return out[0], nil
}

func (s *StreamConfigs) ListStreamConfigs(ctx context.Context, tenant string) ([]*storage.StreamConfig, error) {
	return s.query(ctx, `SELECT `+streamConfigCols+` FROM stream_data_configs WHERE tenant = $1 ORDER BY created_ns, id`, tenant)
}

func (s *StreamConfigs) DeleteStreamConfig(ctx context.Context, tenant string, id [16]byte) error {
	n, err := s.exec(ctx, "delete stream config", `DELETE FROM stream_data_configs WHERE tenant = $1 AND id = $2`, tenant, id)
	if err == nil && n == 0 {
		return storage.ErrNotFound
	}
	return err
}
