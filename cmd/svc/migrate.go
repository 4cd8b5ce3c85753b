package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"svc/storage/postgres"
	"svc/storage/sqlite"
)

// migrate applies storage migrations and exits. It reads the same sources
// as serve, so it migrates the database serve would open.
func migrate() int {
	cfg, ok := loadConfig(os.Stderr)
	if !ok {
		return 1
	}
	if cfg.StorageBackend == "memory" {
		msg := "storage backend is memory (SVC_STORAGE_BACKEND): no migrations to apply"
		if cfg.PostgresURL != "" {
			msg += "; SVC_POSTGRES_URL is set but unused: set SVC_STORAGE_BACKEND=postgres to migrate that database"
		}
		fmt.Println(msg)
		return 0
	}
	if cfg.StorageBackend == "sqlite" {
		path := cfg.SQLiteFile()
		fmt.Printf("storage backend is sqlite (SVC_STORAGE_BACKEND): applying migrations to %s\n", path)
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		defer cancel()
		o := sqliteOptions(cfg)
		o.AutoMigrate = true
		start := time.Now()
		db, err := sqlite.Open(ctx, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "svc migrate: %v\n", err)
			return 1
		}
		db.Close()
		fmt.Printf("migrations applied in %s\n", time.Since(start).Round(time.Millisecond))
		return 0
	}
	fmt.Println("storage backend is postgres (SVC_STORAGE_BACKEND): applying migrations")
	ctx, cancel := context.WithTimeout(context.Background(), cfg.PostgresMigrateLockTimeout+cfg.StartupTimeout)
	defer cancel()
	o := postgresOptions(cfg)
	o.AutoMigrate, o.MinConns, o.MaxConns = false, 0, 2
	db, err := postgres.Open(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc migrate: %v\n", err)
		return 1
	}
	defer db.Close()
	start := time.Now()
	n, err := db.Migrate(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc migrate: %v\n", err)
		return 1
	}
	fmt.Printf("migrations applied: %d in %s\n", n, time.Since(start).Round(time.Millisecond))
	return 0
}
