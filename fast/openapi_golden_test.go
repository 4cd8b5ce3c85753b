package fast

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	json "github.com/goccy/go-json"
)

// updateGolden rewrites the golden files of this package instead of
// comparing with them: go test ./fast -run TestOpenAPIGolden -update, or
// make generate (docs/CONTRIBUTING.md, "The OpenAPI document").
var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden.json from the code")

const openAPIGolden = "testdata/openapi.golden.json"

// TestOpenAPIGolden: /openapi.json, as a node without configured services
// serves it to host svc.test, is byte for byte testdata/openapi.golden.json
// once indented (the file is indented so a change reads as a diff of a few
// lines; indenting keeps key order, strings and number spellings as
// served). Any change to the document shows up as a diff of that file in
// review; rewrite it with -update after checking the change is meant.
func TestOpenAPIGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, servedDoc(t, newTestServer(t)), "", "  "); err != nil {
		t.Fatal(err)
	}
	got := append(buf.Bytes(), '\n')
	// What make generate writes is what the server serves.
	gen, err := GoldenOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gen, got) {
		t.Fatal("GoldenOpenAPI differs from the served document")
	}
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(openAPIGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(openAPIGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(openAPIGolden)
	if err != nil {
		t.Fatalf("%v (write it with: make generate)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		i := 0
		for i < len(gl) && i < len(wl) && bytes.Equal(gl[i], wl[i]) {
			i++
		}
		line := func(ls [][]byte) []byte {
			if i < len(ls) {
				return ls[i]
			}
			return []byte("(end of file)")
		}
		t.Fatalf("/openapi.json differs from %s from line %d:\n got: %s\nwant: %s\n"+
			"if the change is meant: make generate (or go test ./fast -run TestOpenAPIGolden -update)",
			openAPIGolden, i+1, line(gl), line(wl))
	}
}

// TestOpenAPICachedIsBuilt: the document a server keeps from the per-process
// cache is the one buildOpenAPI makes from its routes now, and a route
// table that differs only in an attached handler gets its own document (it
// documents that operation's 501).
func TestOpenAPICachedIsBuilt(t *testing.T) {
	s := newTestServer(t)
	fresh, err := buildOpenAPI(s.Routes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.openapi.head, fresh.head) || !bytes.Equal(s.openapi.tail, fresh.tail) {
		t.Fatal("cached document differs from a fresh build over the same routes")
	}
	routes := append([]Route(nil), s.Routes()...)
	i := slices.IndexFunc(routes, func(r Route) bool { return r.Handler != nil })
	if i < 0 {
		t.Fatal("no attached handler to detach")
	}
	routes[i].Handler = nil
	detached, err := cachedOpenAPI(routes)
	if err != nil {
		t.Fatal(err)
	}
	want, err := buildOpenAPI(routes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(detached.tail, want.tail) || bytes.Equal(detached.tail, fresh.tail) {
		t.Fatalf("detaching %s: cached document is not the fresh build for that table", routes[i].OpID)
	}
}
