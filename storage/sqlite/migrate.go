package sqlite

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"svc/migrations"
)

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations.SQLite, ".")
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
		b, err := fs.ReadFile(migrations.SQLite, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate brings the file to this binary's schema. The schema version is
// SQLite's user_version (the number of the last migration applied); each
// migration runs in its own transaction with the version bump, so a crash
// mid-way leaves the previous version. The writer is not serving yet.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("sqlite: reading migrations: %w", err)
	}
	c := db.w.conn
	var cur int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("sqlite: reading the schema version of %s: %w", db.opt.Path, err)
	}
	latest := 0
	pending := 0
	for _, m := range ms {
		latest = max(latest, m.version)
		if m.version > cur {
			pending++
		}
	}
	if cur > latest {
		return fmt.Errorf("sqlite: %s has schema version %d, newer than this svc (%d): use a newer svc or a backup", db.opt.Path, cur, latest)
	}
	if pending == 0 {
		return nil
	}
	if !db.opt.AutoMigrate {
		return fmt.Errorf("sqlite: %s lacks %d of this version's migrations and SVC_SQLITE_AUTO_MIGRATE is false: set SVC_SQLITE_AUTO_MIGRATE=true to apply them", db.opt.Path, pending)
	}
	for _, m := range ms {
		if m.version <= cur {
			continue
		}
		if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := c.ExecContext(ctx, m.sql); err != nil {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := c.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.version)); err != nil {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("sqlite: migration %s: commit: %w", m.name, err)
		}
	}
	return nil
}
