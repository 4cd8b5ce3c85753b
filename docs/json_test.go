package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// jsonScanners are the production files that read fields out of stored
// documents with jsonparser without decoding them (docs/CONTRIBUTING.md,
// "JSON"): the condition evaluator, the stats grouping and the unique-key
// values.
var jsonScanners = map[string]bool{
	"predicate/eval.go": true,
	"entity/stats.go":   true,
	"entity/unique.go":  true,
}

// TestOneJSONDecoder keeps the JSON rule of docs/CONTRIBUTING.md: in
// production code (not tests, not generated protobuf code) JSON is decoded
// and encoded with github.com/goccy/go-json only; jsonparser appears only
// in the scanners listed above; no other JSON library is imported
// (encoding/json, json-iterator, sonic, gjson, ...). svc's own
// platform/jsondoc (the stored-text checks) is not a decoder. The depguard
// rule "json" of .golangci.yml refuses encoding/json as well; this test
// runs without golangci-lint and covers every other library.
func TestOneJSONDecoder(t *testing.T) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case d.Name() == ".git", d.Name() == "testdata", d.Name() == "node_modules", rel == "compute/pb":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			switch {
			case path == "github.com/goccy/go-json", path == "svc/platform/jsondoc":
			case path == "github.com/buger/jsonparser":
				if !jsonScanners[rel] {
					t.Errorf("%s imports jsonparser: decode with github.com/goccy/go-json, or list the file as a scanner with its reason (docs/CONTRIBUTING.md, JSON)", rel)
				}
			case strings.Contains(strings.ToLower(path), "json"):
				t.Errorf("%s imports %s: svc decodes and encodes JSON with github.com/goccy/go-json only (docs/CONTRIBUTING.md, JSON)", rel, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("checked only %d production files: is root right?", n)
	}
	for f := range jsonScanners {
		if _, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, f), nil, parser.ImportsOnly); err != nil {
			t.Errorf("listed scanner %s: %v", f, err)
		}
	}
}
