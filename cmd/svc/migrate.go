package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"svc/config"
	"svc/storage/postgres"
)

// migrate applies storage migrations and exits. It reads the process
// environment only, so a deploy job needs no .env files.
func migrate() int {
	cfg, err := config.Load(config.Source{Getenv: os.LookupEnv})
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: configuration: %v\n", err)
		return 1
	}
	if cfg.StorageBackend == "memory" {
		fmt.Println("storage backend is memory: no migrations to apply")
		return 0
	}
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
