// Command gen writes the files of the repository that are generated from
// svc's own code, so each fact has one source:
//
//   - docs/operations.md from the route table and the OpenAPI document
//     (fast.Operations);
//   - fast/testdata/openapi.golden.json, the OpenAPI document as served
//     (fast.GoldenOpenAPI);
//   - the README's configuration tables, between the
//     "<!-- BEGIN generated config: GROUP -->" and "<!-- END generated
//     config: GROUP -->" markers, from platform/config's variable table;
//   - the variable lists of help/topics/config/GROUP.md, one list under
//     each heading the variables name (platform/config/varhelp.go); the
//     rest of a topic stays hand-written.
//
// Run it with `make generate` (or `go generate ./docs/gen`). With -check it
// writes nothing and exits 1 naming the files that differ; the test
// TestGeneratedFilesCurrent does the same in `go test`.
//
//go:generate go run .
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"svc/fast"
	"svc/platform/config"
)

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 if a generated file is out of date")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	files, err := generate(root)
	if err != nil {
		fail(err)
	}
	stale, err := compare(root, files)
	if err != nil {
		fail(err)
	}
	if *check {
		if len(stale) > 0 {
			fail(fmt.Errorf("out of date (run make generate): %s", strings.Join(stale, ", ")))
		}
		return
	}
	for _, name := range stale {
		if err := os.WriteFile(filepath.Join(root, name), files[name], 0o644); err != nil {
			fail(err)
		}
		fmt.Println("wrote", name)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// moduleRoot is the nearest directory at or above the working directory
// holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// generate returns the full new contents of every generated file, keyed by
// its path relative to root.
func generate(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	ops, err := fast.Operations()
	if err != nil {
		return nil, err
	}
	out["docs/operations.md"] = fast.OperationsMarkdown(ops)
	if out["fast/testdata/openapi.golden.json"], err = fast.GoldenOpenAPI(); err != nil {
		return nil, err
	}

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	for _, g := range config.Groups {
		readme, err = replaceBetween(readme, "<!-- BEGIN generated config: "+g+" -->\n", "<!-- END generated config: "+g+" -->", config.ReadmeTable(g))
		if err != nil {
			return nil, fmt.Errorf("README.md: %w", err)
		}
	}
	out["README.md"] = readme

	for _, g := range config.Groups {
		name := "help/topics/config/" + g + ".md"
		topic, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		topic, err = spliceHelp(topic, config.HelpSections(g))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = topic
	}
	return out, nil
}

// compare returns the names of the files whose contents differ from files,
// sorted.
func compare(root string, files map[string][]byte) ([]string, error) {
	var stale []string
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if !bytes.Equal(got, want) {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	return stale, nil
}

// replaceBetween replaces what lies between the begin and end markers of b
// with body; both markers must occur exactly once, begin before end.
func replaceBetween(b []byte, begin, end, body string) ([]byte, error) {
	i := bytes.Index(b, []byte(begin))
	j := bytes.Index(b, []byte(end))
	if i < 0 || j < 0 || j < i+len(begin) || bytes.Count(b, []byte(begin)) != 1 || bytes.Count(b, []byte(end)) != 1 {
		return nil, fmt.Errorf("markers %q … %q missing, repeated or out of order", strings.TrimSpace(begin), end)
	}
	var out bytes.Buffer
	out.Write(b[:i+len(begin)])
	out.WriteString(body)
	out.Write(b[j:])
	return out.Bytes(), nil
}

// spliceHelp rewrites a config topic's variable lists. Under each "## "
// heading, the run of lines that start with "- `SVC_" is the generated
// list: it is replaced by the lines of that heading (removed when the
// heading has none any more). A heading with variables but no list gets
// its list right after the heading; a heading the topic lacks is added
// before NOTES or SEE ALSO.
func spliceHelp(topic []byte, sections []config.HelpSection) ([]byte, error) {
	want := map[string][]string{}
	for _, s := range sections {
		want[s.Heading] = s.Lines
	}
	lines := strings.Split(string(topic), "\n")
	present := map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			present[strings.TrimPrefix(l, "## ")] = true
		}
	}
	var out []string
	done := map[string]bool{}
	runs := map[string]bool{}
	heading := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			if missing := pendingBefore(l, sections, present, done); len(missing) > 0 {
				out = append(out, missing...)
			}
			heading = strings.TrimPrefix(l, "## ")
			out = append(out, l)
			if ls, ok := want[heading]; ok && !done[heading] && !hasListAhead(lines[i+1:]) {
				out = append(out, "")
				out = append(out, ls...)
				done[heading] = true
			}
			continue
		}
		if strings.HasPrefix(l, "- `SVC_") {
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "- `SVC_") {
				i++
			}
			if runs[heading] {
				return nil, fmt.Errorf("two variable lists under ## %s: give the second its own heading (platform/config/varhelp.go Section)", heading)
			}
			runs[heading] = true
			if !done[heading] {
				out = append(out, want[heading]...)
				done[heading] = true
			}
			continue
		}
		out = append(out, l)
	}
	for _, s := range sections {
		if !done[s.Heading] {
			return nil, fmt.Errorf("no place for the %s list (the topic needs a NOTES or SEE ALSO heading)", s.Heading)
		}
	}
	return []byte(strings.Join(out, "\n")), nil
}

// hasListAhead reports whether a generated list starts before the next
// heading.
func hasListAhead(rest []string) bool {
	for _, l := range rest {
		if strings.HasPrefix(l, "## ") {
			return false
		}
		if strings.HasPrefix(l, "- `SVC_") {
			return true
		}
	}
	return false
}

// pendingBefore returns the new sections to insert before heading when it
// is NOTES or SEE ALSO: every section the topic has no heading for, each
// as its own heading and list.
func pendingBefore(heading string, sections []config.HelpSection, present, done map[string]bool) []string {
	if heading != "## NOTES" && heading != "## SEE ALSO" {
		return nil
	}
	var out []string
	for _, s := range sections {
		if done[s.Heading] || present[s.Heading] {
			continue
		}
		out = append(out, "## "+s.Heading, "")
		out = append(out, s.Lines...)
		out = append(out, "")
		done[s.Heading] = true
	}
	return out
}
