package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
)

// variant is a change to svc's PostgreSQL schema applied after svc has
// migrated a fresh database and before the load: run beside the unchanged
// schema in the same rounds, the difference in PostgreSQL CPU per create
// is what the dropped part costs (BENCHMARKS.md, "what each index and the
// audit rows cost").
type variant struct{ Name, What, SQL string }

// variants are every index a create maintains beyond the primary keys
// (migrations/postgres as of migration 0037), one at a time, and the audit
// and revision rows. Rows are skipped by a BEFORE INSERT trigger returning
// NULL (svc writes some with COPY, which fires triggers but not rules), so
// the figure is the rows' heap, index and WAL work less one PL/pgSQL call
// per row.
var variants = []variant{
	{"no-doc-gin", "the GIN index on the document (entities_doc, jsonb_path_ops)", "DROP INDEX entities_doc"},
	{"no-model-id", "the (model, id) index covering state and deletion, of lists and counts", "DROP INDEX entities_model_id"},
	{"no-model-created", "the (model, creation time) index of stream data and paging", "DROP INDEX entities_model_created"},
	{"no-updated-brin", "the BRIN index on the update time", "DROP INDEX entities_updated_brin"},
	{"no-audit-rows", "the audit rows (heap, primary key, WAL)", skipRows("audit_events")},
	{"no-revision-rows", "the revision rows (heap, primary key, WAL, the document's second copy)", skipRows("entity_revisions")},
}

func skipRows(table string) string {
	return `CREATE OR REPLACE FUNCTION bench_skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER bench_skip BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION bench_skip_row()`
}

func variantNames() string {
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// withVariants turns the one build into the unchanged schema ("schema")
// followed by one build per variant, all of the same binary.
func withVariants(builds []build, list string) ([]build, error) {
	if len(builds) != 1 {
		return nil, fmt.Errorf("-pg-variants takes one -svc binary, not %d", len(builds))
	}
	out := []build{{Name: "schema", Path: builds[0].Path}}
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, v := range variants {
			if name == "all" || v.Name == name {
				out = append(out, build{Name: v.Name, Path: builds[0].Path, SQL: v.SQL})
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown -pg-variants entry %q (known: all, %s)", name, variantNames())
		}
	}
	return out, nil
}

func variantWhat(name string) string {
	for _, v := range variants {
		if v.Name == name {
			return v.What
		}
	}
	return ""
}

func execSQL(ctx context.Context, dbURL, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// unixURL is the database of a TCP URL reached over the server's Unix
// socket instead (pgx: host=<socket directory>, the port names the socket
// file).
func (s *pgServer) unixURL(tcpURL string) (string, error) {
	u, err := url.Parse(tcpURL)
	if err != nil {
		return "", err
	}
	dir := s.dir
	if dir == "" {
		dir = "/var/run/postgresql"
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL."+port)); err != nil {
		return "", fmt.Errorf("no Unix socket for the -unix scenarios: %w", err)
	}
	q := url.Values{"host": {dir}, "port": {port}}
	return fmt.Sprintf("postgres://%s@%s?%s", u.User.String(), u.Path, q.Encode()), nil
}
