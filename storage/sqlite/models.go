package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"svc/storage"
)

// Models is the SQLite storage.Models.
type Models struct{ db *DB }

// Models returns the model store of db.
func (db *DB) Models() *Models { return &Models{db} }

const modelCols = `tenant, name, version, state, change_level, schema, unique_keys, workflows, created_ns, updated_ns, revision`

func scanModel(r scanner) (*storage.Model, error) {
	var m storage.Model
	var created, updated int64
	if err := r.Scan(&m.Tenant, &m.Key.Name, &m.Key.Version, &m.State, &m.ChangeLevel, &m.Schema, &m.UniqueKeys, &m.Workflows,
		&created, &updated, &m.Revision); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("sqlite: reading model: %w", err)
	}
	m.CreatedAt, m.UpdatedAt = fromNS(created), fromNS(updated)
	return &m, nil
}

func (s *Models) GetModel(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	return scanModel(s.db.queryRow(ctx, `SELECT `+modelCols+` FROM models WHERE tenant = ? AND name = ? AND version = ?`,
		tenant, key.Name, key.Version))
}

func (s *Models) ListModels(ctx context.Context, tenant string) ([]*storage.Model, error) {
	rows, err := s.db.query(ctx, `SELECT `+modelCols+` FROM models WHERE tenant = ? ORDER BY name, version`, tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*storage.Model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing models: %w", err)
	}
	return out, nil
}

// PutModel compares and writes in one write job.
func (s *Models) PutModel(ctx context.Context, m *storage.Model) error {
	var created, rev int64
	now := time.Now().UTC()
	err := s.db.w.write(ctx, func(w *wtx) error {
		var cur, curCreated int64
		err := w.queryRow(`SELECT revision, created_ns FROM models WHERE tenant = ? AND name = ? AND version = ?`,
			m.Tenant, m.Key.Name, m.Key.Version).Scan(&cur, &curCreated)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if m.Revision != 0 {
				return storage.ErrConflict
			}
			created = ns(now)
		case err != nil:
			return fmt.Errorf("sqlite: reading model: %w", err)
		case cur != m.Revision:
			return storage.ErrConflict
		default:
			created = curCreated
		}
		rev = m.Revision + 1
		_, err = w.exec(`INSERT INTO models (`+modelCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant, name, version) DO UPDATE SET state = excluded.state, change_level = excluded.change_level,
			schema = excluded.schema, unique_keys = excluded.unique_keys, workflows = excluded.workflows,
			updated_ns = excluded.updated_ns, revision = excluded.revision`,
			m.Tenant, m.Key.Name, m.Key.Version, m.State, m.ChangeLevel, docArg(m.Schema), docArg(m.UniqueKeys), docArg(m.Workflows),
			created, ns(now), rev)
		if err != nil {
			return fmt.Errorf("sqlite: writing model: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.CreatedAt, m.UpdatedAt, m.Revision = fromNS(created), now, rev
	return nil
}

func (s *Models) DeleteModel(ctx context.Context, tenant string, key storage.ModelKey) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM models WHERE tenant = ? AND name = ? AND version = ?`, tenant, key.Name, key.Version)
		if err != nil {
			return fmt.Errorf("sqlite: deleting model: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
}
