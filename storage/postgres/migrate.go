package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"svc/migrations"
)

// migrateLockKey is the advisory lock that serialises migrations across
// nodes starting together.
const migrateLockKey = 0x5356434d4947 // "SVCMIG"

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations.Postgres, ".")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", e.Name())
		}
		b, err := fs.ReadFile(migrations.Postgres, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate applies pending migrations under an advisory lock, each in its
// own transaction, and returns how many it applied. The wait for the lock
// is bounded by MigrateLockWait.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	ms, err := loadMigrations()
	if err != nil {
		return 0, fmt.Errorf("postgres: reading migrations: %w", err)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	lockMS := strconv.FormatInt(db.opt.MigrateLockWait.Milliseconds(), 10)
	if _, err := conn.Exec(ctx, "SET lock_timeout = "+lockMS); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return 0, fmt.Errorf("postgres: migrate: waiting for the migration lock: %w", err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrateLockKey)
	if _, err := conn.Exec(ctx, "RESET lock_timeout"); err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	applied := 0
	for _, m := range ms {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)", m.version).Scan(&exists); err != nil {
			return applied, fmt.Errorf("postgres: migrate: %w", err)
		}
		if exists {
			continue
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return applied, err
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			tx.Rollback(ctx)
			return applied, fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			tx.Rollback(ctx)
			return applied, err
		}
		if err := tx.Commit(ctx); err != nil {
			return applied, fmt.Errorf("postgres: migration %s: commit: %w", m.name, err)
		}
		applied++
	}
	return applied, nil
}

// Pending counts this binary's migrations the database has not applied
// (all of them on an empty database).
func (db *DB) Pending(ctx context.Context) (int, error) {
	ms, err := loadMigrations()
	if err != nil {
		return 0, fmt.Errorf("postgres: reading migrations: %w", err)
	}
	var exists bool
	if err := db.pool.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	if !exists {
		return len(ms), nil
	}
	rows, err := db.pool.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return 0, fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return 0, fmt.Errorf("postgres: reading the schema version: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	n := 0
	for _, m := range ms {
		if !applied[m.version] {
			n++
		}
	}
	return n, nil
}
