package postgres

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"svc/migrations"
)

// The lists SaveSQLSchema checks a role against are copies of what
// migrations 0034 and 0035 revoke. A name added to a migration but not
// here would go unchecked (a role left able to read it would be given SQL
// access); one added here but not to a migration would refuse every
// schema. These tests keep the copies equal.

var quoted = regexp.MustCompile(`'([^']+)'`)

// quotedIn returns the single-quoted strings of text between the first
// occurrence of start and the next occurrence of end after it (or the
// end of text when end is empty), sorted.
func quotedIn(t *testing.T, text, start, end string) []string {
	t.Helper()
	i := strings.Index(text, start)
	if i < 0 {
		t.Fatalf("%q not found", start)
	}
	rest := text[i+len(start):]
	j := len(rest)
	if end != "" {
		j = strings.Index(rest, end)
	}
	if j < 0 {
		t.Fatalf("%q not found after %q", end, start)
	}
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(rest[:j], -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

func migrationText(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(migrations.Postgres, name)
	if err != nil {
		t.Fatalf("read migration: %v", err)
	}
	// Comments may quote names too; only statements count.
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if k := strings.Index(l, "--"); k >= 0 {
			l = l[:k]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestHardeningListsMatchMigrations(t *testing.T) {
	m34 := migrationText(t, "0034_sql_tenant_hardening.sql")
	m35 := migrationText(t, "0035_sql_catalog_private.sql")
	for _, c := range []struct {
		name      string
		migration []string
		checked   []string
	}{
		{"0034 functions", quotedIn(t, m34, "p.pronamespace", "has_function_privilege"), quotedIn(t, hardenedFuncs, "p.pronamespace", "")},
		{"0035 relations", quotedIn(t, m35, "ARRAY[", "]"), sorted(catalogPrivateRels)},
		{"0035 functions", quotedIn(t, m35, "p.pronamespace", "has_function_privilege"), quotedIn(t, catalogPrivateFuncs, "p.pronamespace", "")},
	} {
		if len(c.migration) == 0 {
			t.Errorf("%s: no names parsed from the migration", c.name)
		}
		if !slices.Equal(c.migration, c.checked) {
			t.Errorf("%s differ:\nmigration: %v\nchecked:   %v", c.name, c.migration, c.checked)
		}
	}
}
