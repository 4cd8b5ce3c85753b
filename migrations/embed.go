// Package migrations holds the PostgreSQL schema as numbered SQL files,
// embedded in the binary and applied in order by storage/postgres.
package migrations

import "embed"

// FS holds NNNN_name.sql files; the number is the schema version.
//
//go:embed *.sql
var FS embed.FS
