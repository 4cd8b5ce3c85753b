package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"svc/storage/sqlite"
)

// backupCmd copies the configured SQLite database while svc may be
// running (`svc backup --to FILE`). It reads the same configuration
// sources as serve, so it copies the file serve uses.
func backupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "the file to write the copy to; must not exist")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "svc backup: usage: svc backup --to FILE")
		return 2
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 1
	}
	switch cfg.StorageBackend {
	case "memory":
		fmt.Fprintln(stderr, "svc backup: the memory backend (SVC_STORAGE_BACKEND) keeps nothing on disk: there is nothing to back up")
		return 1
	case "postgres":
		fmt.Fprintln(stderr, `svc backup: the postgres backend is backed up with PostgreSQL's own tools, for example: pg_dump --format=custom --file=FILE "$SVC_POSTGRES_URL"`)
		return 1
	}
	path := cfg.SQLiteFile()
	start := time.Now()
	size, err := sqlite.Backup(context.Background(), path, *to, max(cfg.SQLiteBusyTimeout, 10*time.Second))
	if err != nil {
		fmt.Fprintf(stderr, "svc backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, integrity ok) in %s\n", path, *to, size, time.Since(start).Round(time.Millisecond))
	return 0
}
