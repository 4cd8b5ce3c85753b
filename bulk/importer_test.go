package bulk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

func TestParseModelRef(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ModelRef
		ok   bool
	}{
		{"orders/1", ModelRef{"orders", 1}, true},
		{"a b/12", ModelRef{"a b", 12}, true},
		{"orders", ModelRef{}, false},
		{"/1", ModelRef{}, false},
		{"orders/0", ModelRef{}, false},
		{"orders/-1", ModelRef{}, false},
		{"orders/x", ModelRef{}, false},
		{"orders/1/2", ModelRef{}, false},
	} {
		got, err := ParseModelRef(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseModelRef(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	if s := (ModelRef{"a b", 3}).path(); s != "a%20b/3" {
		t.Errorf("path %q", s)
	}
}

// TestSources: a directory contributes its data files (and their .gz
// forms) in name order; other files and subdirectories are left out; no
// path is standard input; a missing path is an error naming it.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.ndjson", "a.json", "c.jsonl.gz", "d.txt", "e.ndjson.zip"} {
		os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub.ndjson"), 0o755)
	got, err := Sources([]string{dir, "-"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, filepath.Base(s.Path))
		if s.Path != "-" && s.Size != 3 {
			t.Errorf("%s size %d, want 3", s.Path, s.Size)
		}
	}
	if strings.Join(names, ",") != "a.json,b.ndjson,c.jsonl.gz,-" {
		t.Errorf("sources %v", names)
	}
	if s, _ := Sources(nil); len(s) != 1 || s[0].Path != "-" {
		t.Errorf("no path: %v, want stdin", s)
	}
	missing := filepath.Join(dir, "nope.ndjson")
	if _, err := Sources([]string{missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing path: %v", err)
	}
}

// fakeSvc answers NDJSON creates as svc does and records every document
// it committed; refuse, when set, picks a document (its seq) to refuse
// with svc's 400 naming the line within the request.
type fakeSvc struct {
	mu       sync.Mutex
	seen     map[int]int // seq -> times committed
	requests int
	refuse   int
}

func (f *fakeSvc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || !strings.HasPrefix(r.URL.Path, "/api/entity/ndjson/orders/1") {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, 500)
		return
	}
	var seqs []int
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		var d struct{ Seq int }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		seqs = append(seqs, d.Seq)
	}
	if tw, _ := strconv.Atoi(r.URL.Query().Get("transactionWindow")); tw != len(seqs) {
		http.Error(w, fmt.Sprintf("transactionWindow %d for %d documents", tw, len(seqs)), 500)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	for i, s := range seqs {
		if f.refuse > 0 && s == f.refuse {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"status":400,"detail":"line %d: bad document","properties":{"errorCode":"BAD_REQUEST","line":%d}}`, i+1, i+1)
			return
		}
	}
	for _, s := range seqs {
		f.seen[s]++
	}
	fmt.Fprintf(w, `{"entitiesCreated":%d}`, len(seqs))
}

func seqFile(t *testing.T, dir, name string, first, n int) Source {
	t.Helper()
	p := filepath.Join(dir, name)
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "{\"seq\":%d}\n", i)
		if i%10 == 0 {
			b.WriteString("\n") // blank lines are skipped but counted
		}
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	st, _ := os.Stat(p)
	return Source{Path: p, Size: st.Size()}
}

// TestImportSendsEachDocumentOnceAndResumes: over several connections
// every document is committed exactly once, in batches of at most Batch;
// a second run with the same checkpoint sends nothing and counts every
// document as skipped.
func TestImportSendsEachDocumentOnceAndResumes(t *testing.T) {
	f := &fakeSvc{seen: map[int]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	srcs := []Source{seqFile(t, dir, "a.ndjson", 1, 1050), seqFile(t, dir, "b.ndjson", 1051, 333)}
	cp := filepath.Join(dir, "cp")
	c := &Client{URL: srv.URL + "/api"}
	o := ImportOptions{Model: ModelRef{"orders", 1}, Sources: srcs, Batch: 100, Connections: 3, Checkpoint: cp}
	res, err := Import(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 1383 || res.Skipped != 0 || res.Requests != 11+4 {
		t.Errorf("result %+v, want 1383 created in 15 requests", res)
	}
	for s := 1; s <= 1383; s++ {
		if f.seen[s] != 1 {
			t.Fatalf("seq %d committed %d times", s, f.seen[s])
		}
	}
	res, err = Import(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 0 || res.Skipped != 1383 || f.requests != 15 {
		t.Errorf("resume: %+v after %d requests, want nothing sent and 1383 skipped", res, f.requests)
	}
}

// TestImportBadDocumentNamesItsLine: svc's 400 for one document of a batch
// ends the import with that document's file and line; the batches before
// it are committed and recorded, and a resume after the fix sends only the
// rest.
func TestImportBadDocumentNamesItsLine(t *testing.T) {
	f := &fakeSvc{seen: map[int]int{}, refuse: 250}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	src := seqFile(t, dir, "a.ndjson", 1, 400)
	cp := filepath.Join(dir, "cp")
	c := &Client{URL: srv.URL + "/api"}
	o := ImportOptions{Model: ModelRef{"orders", 1}, Sources: []Source{src}, Batch: 100, Connections: 1, Checkpoint: cp}
	res, err := Import(context.Background(), c, o)
	var bd *BadDocError
	if !errors.As(err, &bd) {
		t.Fatalf("%v, want a BadDocError", err)
	}
	// seq 250 is on line 250 + the 24 blank lines after seqs 10..240.
	if bd.Path != src.Path || bd.Line != 274 || bd.Detail != "bad document" {
		t.Errorf("bad document %+v (%q), want %s line 274", bd, bd.Error(), src.Path)
	}
	if res.Created != 200 || len(f.seen) != 200 {
		t.Errorf("created %d (svc saw %d), want the two batches before the bad one", res.Created, len(f.seen))
	}
	f.refuse = 0
	if res, err = Import(context.Background(), c, o); err != nil || res.Created != 200 || res.Skipped != 200 {
		t.Fatalf("resume: %+v, %v; want 200 created, 200 skipped", res, err)
	}
	for s := 1; s <= 400; s++ {
		if f.seen[s] != 1 {
			t.Fatalf("seq %d committed %d times", s, f.seen[s])
		}
	}
}

// TestImportShortCommitIsAnError: svc answering fewer created documents
// than sent is an error naming the lines, not a silent loss.
func TestImportShortCommitIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, `{"entitiesCreated":1}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := seqFile(t, dir, "a.ndjson", 1, 5)
	_, err := Import(context.Background(), &Client{URL: srv.URL}, ImportOptions{Model: ModelRef{"orders", 1}, Sources: []Source{src}, Batch: 10})
	if err == nil || !strings.Contains(err.Error(), "svc created 1 of 5 documents") {
		t.Fatalf("%v, want 'svc created 1 of 5 documents'", err)
	}
	for _, b := range []int{0, -1, 1001} {
		if _, err := Import(context.Background(), &Client{URL: srv.URL}, ImportOptions{Sources: []Source{src}, Batch: b}); err == nil {
			t.Errorf("batch %d accepted", b)
		}
	}
}

// TestImportProgressCountsCommittedDocuments (issue 26): the progress
// figure is of documents svc committed, not of bytes read ahead of the
// requests in flight. While svc holds the first request, nothing is done;
// after the import, all of the file is.
func TestImportProgressCountsCommittedDocuments(t *testing.T) {
	f := &fakeSvc{seen: map[int]int{}}
	arrived, release := make(chan struct{}, 100), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := seqFile(t, dir, "a.ndjson", 1, 100)
	p := &Progress{Verb: "import", Total: src.Size, Out: io.Discard, Interval: time.Hour}
	o := ImportOptions{Model: ModelRef{"orders", 1}, Sources: []Source{src}, Batch: 10, Connections: 1,
		Checkpoint: filepath.Join(dir, "cp"), Progress: p}
	done := make(chan error, 1)
	go func() {
		_, err := Import(context.Background(), &Client{URL: srv.URL + "/api"}, o)
		done <- err
	}()
	<-arrived
	if n := p.Bytes(); n != 0 {
		t.Errorf("%d bytes counted done while svc has committed nothing", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := p.Bytes(); n != src.Size {
		t.Errorf("%d bytes done after the import, want the file's %d", n, src.Size)
	}
}
