// Package docs holds the repository's knowledge (architecture, decision
// records, the operations list) and the tests that keep it true: the
// architecture document names exactly the Go packages that exist, comments
// cite files in docs/ rather than documents outside the repository, and
// every cited decision record exists.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's directory.
const root = ".."

// scanned reports whether a file's text is checked for citations: source,
// SQL, protos, Markdown, JSON and YAML fixtures, scripts.
func scanned(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".sql", ".proto", ".json", ".yaml", ".yml", ".sh", ".txt", ".html":
		return true
	}
	base := filepath.Base(path)
	return base == "Makefile" || base == "Dockerfile"
}

// walkFiles calls fn for every scanned file of the repository, with its
// slash-separated path relative to the root.
func walkFiles(t *testing.T, fn func(rel string, text string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !scanned(p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fn(filepath.ToSlash(rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// citation is a way of pointing at a document kept outside the repository
// (docs/decisions/0001-knowledge-in-the-repository.md): the product
// specification, the rulings, the study notes of the compatible system and
// their section numbers. Comments cite docs/ instead, or state the fact.
type citation struct {
	what string
	re   *regexp.Regexp
}

var citations = []citation{
	{"a section sign (cite docs/decisions/, or an RFC by name)", regexp.MustCompile(`§`)},
	{"an outside notes or specification file", regexp.MustCompile(`(?i)entity-service\.md|entity-workflow|\biam\.md|api-surface|model-inference|search-audit-misc|ops-cluster-storage|sql-schema-stream-data|client-templates\.md|change-feed\.md|shared/(spec|reference)|cyoda-docs|sql-schema §`)},
	{"the rulings file", regexp.MustCompile(`DECISIONS(\.md)?\b`)},
	{"the rulings", regexp.MustCompile(`(?i)\brulings?\b`)},
	{"the reference system or its notes", regexp.MustCompile(`(?i)\bthe reference\b|\breference('s| system| notes| clients?| platform| contract)\b`)},
	{"the study notes", regexp.MustCompile(`(?i)\bthe notes\b|\bnotes'|\bnotes §|\bops notes\b|\(notes\b`)},
	{"the specification by section", regexp.MustCompile(`(?i)\bspec \d|\bspec §|(^|[^\w.])\(spec\)|\bspec's\b|\bseed\b.{0,10}\bspec\b|\bspec (order|member order|schema|shape)\b`)},
}

// citationWords: every pattern of citations matches only a line that, in
// lower case, contains one of these. mayCite skips the regular expressions
// (most of the test's time under -race) on the other lines.
var citationWords = []string{"§", "entity-", "iam.md", "api-surface", "model-inference", "search-audit",
	"ops-cluster", "sql-schema", "client-templates", "change-feed", "shared/", "cyoda-docs",
	"decisions", "ruling", "reference", "notes", "spec"}

// mayCite reports whether line can match a citation pattern. A line with
// a non-ASCII byte always goes to the patterns: (?i) folds some non-ASCII
// letters (ſ, K) onto ASCII ones, which strings.ToLower does not.
func mayCite(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] >= 0x80 {
			return true
		}
	}
	lower := strings.ToLower(line)
	for _, w := range citationWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// TestNoOutsideCitations fails when a file of the repository cites a
// document that is not in it. A line may name an RFC section (RFC 8259
// §8.1): RFCs are public standards, not project documents.
func TestNoOutsideCitations(t *testing.T) {
	t.Parallel()
	self := "docs/docs_test.go"
	files, hits := 0, 0
	walkFiles(t, func(rel, text string) {
		if rel == self {
			return
		}
		files++
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if !mayCite(line) {
				continue
			}
			for _, c := range citations {
				if !c.re.MatchString(line) {
					continue
				}
				if c.what == citations[0].what && strings.Contains(line, "RFC") {
					continue
				}
				hits++
				t.Errorf("%s:%d cites %s: %s", rel, n, c.what, cut(strings.TrimSpace(line)))
				break
			}
		}
	})
	if files < 500 {
		t.Fatalf("scanned only %d files; the walk is broken", files)
	}
	if hits > 0 {
		t.Logf("cite the record in docs/decisions/ that states the decision, or state the fact (docs/CONTRIBUTING.md)")
	}
}

// TestCitationPatterns: each pattern catches the forms that were in the
// code before the records existed, and leaves ordinary words alone.
func TestCitationPatterns(t *testing.T) {
	t.Parallel()
	bad := []string{
		"// Limits of direct search (notes §2.1).",
		"// SIMPLE_VIEW (spec §4.6)",
		"// States of a model (spec 3).",
		"// both user_roles (spec) and scopes",
		"// as the reference does.",
		"// (DECISIONS: real clients)",
		"// by ruling",
		"// (entity-workflow.md §2.5)",
		"// iam.md 7.1",
		"// the notes' field names",
		"// in spec member order",
	}
	ok := []string{
		"// RFC 8259 §8.1 forbids it",
		"return badSort(\"invalid sort field: \" + strconv.Quote(spec))",
		"// the CloudEvents spec v1.0",
		"// a reference to the entity",
		"// the API reference page",
		"// the wire contract svc is compatible with",
		"// notes := x",
	}
	match := func(line string) bool {
		for _, c := range citations {
			if c.re.MatchString(line) && !(c.what == citations[0].what && strings.Contains(line, "RFC")) {
				return true
			}
		}
		return false
	}
	for _, l := range bad {
		if !match(l) {
			t.Errorf("not caught: %s", l)
		}
		if !mayCite(l) {
			t.Errorf("mayCite skips a citation: %s", l)
		}
	}
	for _, l := range ok {
		if match(l) {
			t.Errorf("wrongly caught: %s", l)
		}
	}
}

var recordRef = regexp.MustCompile(`docs/decisions/(\d{4})[\w.-]*`)

// TestDecisionCitationsResolve: every docs/decisions/NNNN… a file cites is
// a record that exists (a full file name must match exactly), and the
// records' index lists every record.
func TestDecisionCitationsResolve(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("decisions")
	if err != nil {
		t.Fatal(err)
	}
	byNum := map[string]string{}
	for _, e := range entries {
		if n := e.Name(); len(n) > 5 && n[4] == '-' && strings.HasSuffix(n, ".md") {
			if prev, dup := byNum[n[:4]]; dup {
				t.Errorf("two records numbered %s: %s and %s", n[:4], prev, n)
			}
			byNum[n[:4]] = n
		}
	}
	if len(byNum) < 30 {
		t.Fatalf("only %d decision records", len(byNum))
	}
	cited := 0
	walkFiles(t, func(rel, text string) {
		for _, m := range recordRef.FindAllStringSubmatch(text, -1) {
			cited++
			name, ok := byNum[m[1]]
			if !ok {
				t.Errorf("%s cites %s: no record %s", rel, m[0], m[1])
				continue
			}
			ref := strings.TrimRight(m[0], ".-")
			if ref != "docs/decisions/"+m[1] && ref != "docs/decisions/"+name {
				t.Errorf("%s cites %s: the record is docs/decisions/%s", rel, m[0], name)
			}
		}
	})
	if cited < 100 {
		t.Errorf("only %d citations of decision records found", cited)
	}
	index, err := os.ReadFile("decisions/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range byNum {
		if !strings.Contains(string(index), "("+name+")") {
			t.Errorf("decisions/README.md does not list %s", name)
		}
	}
}

// goPackages returns the directories of the repository holding .go files
// (testdata and hidden directories aside), slash-separated, relative to the
// root.
func goPackages(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && p != root) || n == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var packageRow = regexp.MustCompile("^\\| `([a-z0-9/_-]+)` \\|")

// TestArchitectureNamesEveryPackage: the Packages table of ARCHITECTURE.md
// names every Go package at the first and second level of the tree, and
// every package it names exists (deeper ones may be listed too). A package
// that is added, moved or removed must be described there in the same
// change.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "## ") {
			inTable = strings.TrimSpace(line) == "## Packages"
			continue
		}
		if !inTable {
			continue
		}
		if m := packageRow.FindStringSubmatch(line); m != nil {
			if listed[m[1]] {
				t.Errorf("ARCHITECTURE.md lists %s twice", m[1])
			}
			listed[m[1]] = true
		}
	}
	if len(listed) < 20 {
		t.Fatalf("found only %d rows in the ## Packages table of ARCHITECTURE.md", len(listed))
	}
	pkgs := goPackages(t)
	var missing, stale []string
	for p := range pkgs {
		if strings.Count(p, "/") <= 1 && p != "." && !listed[p] {
			missing = append(missing, p)
		}
	}
	for p := range listed {
		if !pkgs[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	for _, p := range missing {
		t.Errorf("package %s exists but ARCHITECTURE.md's Packages table does not describe it", p)
	}
	for _, p := range stale {
		t.Errorf("ARCHITECTURE.md's Packages table describes %s, which is not a Go package of the tree", p)
	}
}

func cut(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

var docPath = regexp.MustCompile("`([a-z][A-Za-z0-9_.-]*/[A-Za-z0-9_./-]*)`")

// TestDocPathsExist: every repository path docs/ names in code spans
// (`entity/txjoin.go`, `storage/overlay`, `help/topics/config/`) exists, so
// a moved or removed file shows up in the records and the architecture
// document as a failing test, not as a stale pointer.
func TestDocPathsExist(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob("decisions/*.md")
	files = append(files, recs...)
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docPath.FindAllStringSubmatch(string(raw), -1) {
			p := strings.TrimSuffix(m[1], "/...") // a Go package pattern names its root
			if strings.ContainsAny(p, "{}*<>") || strings.Contains(p, "://") || strings.HasPrefix(p, "application/") || strings.HasPrefix(p, "text/") {
				continue
			}
			first := strings.SplitN(p, "/", 2)[0]
			if _, err := os.Stat(filepath.Join(root, first)); err != nil {
				continue // not a repository path (a media type, a URL path)
			}
			checked++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Errorf("docs/%s names %s, which does not exist", f, p)
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d paths", checked)
	}
}
