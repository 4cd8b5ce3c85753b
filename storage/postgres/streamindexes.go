package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// StreamIndexes is the PostgreSQL storage.StreamIndexes: each user
// composite index is a partial btree on entities, over the model's current
// rows, keyed by its equality expressions, then the range expression of
// the stream SQL, then id (docs/decisions/0025-stream-data.md).
type StreamIndexes struct{ db *DB }

// StreamIndexes returns the composite index store of db.
func (db *DB) StreamIndexes() *StreamIndexes { return &StreamIndexes{db} }

var _ storage.StreamIndexes = (*StreamIndexes)(nil)

// indexDDL is the CREATE INDEX of ix; expressions are spelt by the same
// functions as the stream SQL so the planner can match them.
func indexDDL(ix *storage.StreamIndex) (string, error) {
	var cols []string
	for _, p := range ix.EqPaths {
		switch {
		case p == "state":
			cols = append(cols, "state")
		case strings.HasPrefix(p, "$."):
			cols = append(cols, eqExpr("", strings.Split(p[2:], ".")))
		default:
			return "", fmt.Errorf("postgres: index field %q cannot be indexed", p)
		}
	}
	rv, _ := rangeExpr(&ix.Range, "", "updated_ns")
	cols = append(cols, rv, "id")
	return "CREATE INDEX CONCURRENTLY " + ix.PgIndex + " ON entities (" + strings.Join(cols, ", ") + ") WHERE NOT deleted AND tenant = " +
		quoteLit(ix.Tenant) + " AND model_name = " + quoteLit(ix.Model.Name) + " AND model_version = " + strconv.Itoa(ix.Model.Version), nil
}

func (s *StreamIndexes) CreateStreamIndex(ctx context.Context, ix *storage.StreamIndex) error {
	ix.PgIndex = "sdix_" + hex.EncodeToString(ix.ID[:])
	eq := ix.EqPaths
	if eq == nil {
		eq = []string{} // a range-only index
	}
	ddl, err := indexDDL(ix)
	if err != nil {
		return err
	}
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, `INSERT INTO sd_indexes (tenant, id, model_name, model_version, name, range_path, eq_paths, pg_index, created_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, ix.Tenant, ix.ID, ix.Model.Name, ix.Model.Version, ix.Name, ix.RangePath,
		eq, ix.PgIndex, ix.CreatedAt.UnixNano())
	if err != nil {
		if errors.Is(mapErr(err), storage.ErrExists) {
			return storage.ErrExists
		}
		return fmt.Errorf("postgres: create stream index: %w", err)
	}
	// CONCURRENTLY cannot run in a transaction block: the simple protocol
	// sends it on its own.
	if _, err := c.Exec(ctx, ddl, pgx.QueryExecModeSimpleProtocol); err != nil {
		bg := context.WithoutCancel(ctx)
		_, _ = c.Exec(bg, "DROP INDEX CONCURRENTLY IF EXISTS "+ix.PgIndex, pgx.QueryExecModeSimpleProtocol)
		_, _ = c.Exec(bg, `DELETE FROM sd_indexes WHERE tenant = $1 AND id = $2`, ix.Tenant, ix.ID)
		return fmt.Errorf("postgres: building stream index: %w", err)
	}
	ix.Ready = true
	return nil
}

func (s *StreamIndexes) ListStreamIndexes(ctx context.Context, tenant string, model storage.ModelKey) ([]*storage.StreamIndex, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	// Readiness is the catalogue's: a concurrent build is listed (with
	// its row) before it is valid.
	rows, err := c.Query(ctx, `SELECT x.id, x.name, x.range_path, x.eq_paths, x.pg_index, x.created_ns,
			COALESCE((SELECT i.indisvalid AND i.indisready FROM pg_index i JOIN pg_class k ON k.oid = i.indexrelid
				WHERE k.relname = x.pg_index), false)
		FROM sd_indexes x WHERE x.tenant = $1 AND x.model_name = $2 AND x.model_version = $3 ORDER BY x.created_ns, x.id`,
		tenant, model.Name, model.Version)
	if err != nil {
		return nil, fmt.Errorf("postgres: list stream indexes: %w", err)
	}
	defer rows.Close()
	out := []*storage.StreamIndex{}
	for rows.Next() {
		ix := &storage.StreamIndex{Tenant: tenant, Model: model}
		var created int64
		if err := rows.Scan(&ix.ID, &ix.Name, &ix.RangePath, &ix.EqPaths, &ix.PgIndex, &created, &ix.Ready); err != nil {
			return nil, fmt.Errorf("postgres: list stream indexes: %w", err)
		}
		ix.CreatedAt = unixNano(created)
		out = append(out, ix)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list stream indexes: %w", err)
	}
	return out, nil
}

func (s *StreamIndexes) DropStreamIndex(ctx context.Context, tenant string, id [16]byte) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	var name string
	if err := c.QueryRow(ctx, `SELECT pg_index FROM sd_indexes WHERE tenant = $1 AND id = $2`, tenant, id).Scan(&name); err != nil {
		return notFoundOr(err, "drop stream index")
	}
	if _, err := c.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+name, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("postgres: drop stream index: %w", err)
	}
	if _, err := c.Exec(ctx, `DELETE FROM sd_indexes WHERE tenant = $1 AND id = $2`, tenant, id); err != nil {
		return fmt.Errorf("postgres: drop stream index: %w", err)
	}
	return nil
}
