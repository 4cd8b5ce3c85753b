// Package migrations holds each SQL engine's schema as numbered files,
// embedded in the binary and applied in order by that engine at start
// (docs/ARCHITECTURE.md, "Storage").
package migrations

import "embed"

// postgresFS holds postgres/NNNN_name.sql; the number is the schema version.
//
//go:embed postgres/*.sql
var postgresFS embed.FS

// Postgres is the PostgreSQL engine's migrations, rooted at their directory.
var Postgres = mustSub(postgresFS, "postgres")

// sqliteFS holds sqlite/NNNN_name.sql; the number is the schema version.
//
//go:embed sqlite/*.sql
var sqliteFS embed.FS

// SQLite is the SQLite engine's migrations, rooted at their directory.
var SQLite = mustSub(sqliteFS, "sqlite")
