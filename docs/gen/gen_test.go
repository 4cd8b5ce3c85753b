package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"svc/platform/config"
)

// TestGeneratedFilesCurrent fails when a generated file (docs/operations.md,
// the README's configuration tables, the variable lists of the config help
// topics) differs from what `make generate` would write: a setting, route or
// operation doc changed without regenerating, or a generated part was
// edited by hand.
func TestGeneratedFilesCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/operations.md", "README.md", "help/topics/config/http.md"} {
		if _, ok := files[want]; !ok {
			t.Errorf("generate does not produce %s", want)
		}
	}
	stale, err := compare(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		got, _ := os.ReadFile(filepath.Join(root, name))
		t.Errorf("%s is out of date: run `make generate` (first difference: %s)", name, firstDiff(string(got), string(files[name])))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ": have " + quoteCut(a) + ", want " + quoteCut(b)
		}
	}
	return "none"
}

func quoteCut(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return "\"" + s + "\""
}

func TestSpliceHelp(t *testing.T) {
	sections := []config.HelpSection{
		{Heading: "VARIABLES", Lines: []string{"- `SVC_A` (int, default `1`): a.", "- `SVC_B` (int, no default): b."}},
		{Heading: "EXTRA", Lines: []string{"- `SVC_C` (bool, default `false`): c."}},
	}
	in := "## NAME\n\nx\n\n## VARIABLES\n\n- `SVC_A` (int, default `2`): old.\n- `SVC_OLD` (int, no default): gone.\n\nProse after.\n\n## SEE ALSO\n\n`config`\n"
	got, err := spliceHelp([]byte(in), sections)
	if err != nil {
		t.Fatal(err)
	}
	want := "## NAME\n\nx\n\n## VARIABLES\n\n- `SVC_A` (int, default `1`): a.\n- `SVC_B` (int, no default): b.\n\nProse after.\n\n" +
		"## EXTRA\n\n- `SVC_C` (bool, default `false`): c.\n\n## SEE ALSO\n\n`config`\n"
	if string(got) != want {
		t.Errorf("spliceHelp:\n%s\nwant:\n%s", got, want)
	}
	// Idempotent: splicing the result again changes nothing.
	again, err := spliceHelp(got, sections)
	if err != nil || string(again) != want {
		t.Errorf("second splice changed the topic (%v):\n%s", err, again)
	}
	// A heading without a list gets one; a heading whose variables all
	// moved away loses its list.
	in = "## VARIABLES\n\nIntro.\n\n## EXTRA\n\n- `SVC_X` (int, no default): x.\n\n## SEE ALSO\n"
	got, err = spliceHelp([]byte(in), sections[:1])
	if err != nil {
		t.Fatal(err)
	}
	if want := "## VARIABLES\n\n- `SVC_A` (int, default `1`): a.\n- `SVC_B` (int, no default): b.\n\nIntro.\n\n## EXTRA\n\n\n## SEE ALSO\n"; string(got) != want {
		t.Errorf("spliceHelp without a list:\n%q\nwant:\n%q", got, want)
	}
	// Two lists under one heading are refused, not merged silently.
	in = "## VARIABLES\n\n- `SVC_A` (int, no default): a.\n\nMiddle.\n\n- `SVC_B` (int, no default): b.\n\n## SEE ALSO\n"
	if _, err := spliceHelp([]byte(in), sections[:1]); err == nil || !strings.Contains(err.Error(), "two variable lists") {
		t.Errorf("two lists under one heading: err = %v", err)
	}
	// No place for a new heading.
	if _, err := spliceHelp([]byte("## VARIABLES\n\n- `SVC_A` (int, no default): a.\n"), sections); err == nil {
		t.Error("a topic without NOTES or SEE ALSO took a new heading")
	}
}

func TestReplaceBetween(t *testing.T) {
	got, err := replaceBetween([]byte("a\n<!-- B -->\nold\n<!-- E -->\nz"), "<!-- B -->\n", "<!-- E -->", "new\n")
	if err != nil || string(got) != "a\n<!-- B -->\nnew\n<!-- E -->\nz" {
		t.Errorf("replaceBetween = %q, %v", got, err)
	}
	for _, in := range []string{"no markers", "<!-- E -->\n<!-- B -->\n", "<!-- B -->\n<!-- B -->\n<!-- E -->"} {
		if _, err := replaceBetween([]byte(in), "<!-- B -->\n", "<!-- E -->", "x"); err == nil {
			t.Errorf("replaceBetween(%q) accepted bad markers", in)
		}
	}
}
