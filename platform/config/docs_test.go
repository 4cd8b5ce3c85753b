package config

import (
	"strings"
	"testing"
)

// TestHelpEntriesMatchTable: every help entry names a variable of the table
// and says something; a removed variable must take its entry with it.
func TestHelpEntriesMatchTable(t *testing.T) {
	names := map[string]bool{}
	for _, v := range Vars(&Config{}) {
		names[v.Name] = true
		if strings.TrimSpace(HelpOf(v).Text) == "" {
			t.Errorf("%s: empty help text", v.Name)
		}
	}
	for name, h := range varHelp {
		if !names[name] {
			t.Errorf("varHelp has %s, which is not in the variable table", name)
		}
		if h.Section != strings.ToUpper(h.Section) {
			t.Errorf("%s: section %q is not an upper-case heading", name, h.Section)
		}
	}
}

// TestRenderedReference: the README table and the help lists carry every
// variable of a group once, with its kind and default.
func TestRenderedReference(t *testing.T) {
	for _, g := range Groups {
		table := ReadmeTable(g)
		var lines []string
		for _, s := range HelpSections(g) {
			lines = append(lines, s.Lines...)
		}
		n := 0
		for _, v := range Vars(&Config{}) {
			if v.Group != g {
				continue
			}
			n++
			if strings.Count(table, "| `"+v.Name+"`") != 1 {
				t.Errorf("%s: README table lists %s %d times", g, v.Name, strings.Count(table, "| `"+v.Name+"`"))
			}
			want := "- `" + v.Name + "` (" + string(v.Kind) + ", "
			found := 0
			for _, l := range lines {
				if strings.HasPrefix(l, want) {
					found++
				}
			}
			if found != 1 {
				t.Errorf("%s: help lists %s %d times (want a line starting %q)", g, v.Name, found, want)
			}
		}
		if len(lines) != n {
			t.Errorf("%s: %d help lines for %d variables", g, len(lines), n)
		}
	}
	if !strings.Contains(ReadmeTable("database"), "`SVC_POSTGRES_URL` (+`_FILE`)") {
		t.Error("README table does not mark _FILE variables")
	}
}
