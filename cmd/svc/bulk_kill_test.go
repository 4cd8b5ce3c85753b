package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// committedGate is a reverse proxy in front of svc that passes the first
// `open` NDJSON creates through; each later one it forwards to svc, reads
// svc's whole answer (the batch is committed by then) and withholds it
// from the importer until released. Killing the importer while it waits
// is a kill between the write and the checkpoint.
type committedGate struct {
	open      int64
	passed    atomic.Int64
	committed chan struct{}
	once      sync.Once
	release   chan struct{}
}

func newCommittedGate(t *testing.T, target string, open int64) (*committedGate, string) {
	g := &committedGate{open: open, committed: make(chan struct{}), release: make(chan struct{})}
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		if r.Method != "POST" || !strings.Contains(r.URL.Path, "/entity/ndjson/") || g.passed.Add(1) <= g.open {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err == nil && resp.StatusCode == 200 {
			g.once.Do(func() { close(g.committed) })
		}
		<-g.release
		return err
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
		srv.Close()
	})
	return g, srv.URL + u.Path
}

// TestImportSIGKILLAfterWriteNeverDuplicates: an importer SIGKILLed after
// svc committed a batch and before the importer recorded it in its
// checkpoint re-sends that batch on resume under the same Idempotency-Key
// (bulk.batchKey), and svc answers it from the stored response instead of
// creating its documents again: every document exists exactly once.
// Without the key the resumed import duplicated the withheld batches.
func TestImportSIGKILLAfterWriteNeverDuplicates(t *testing.T) {
	t.Parallel()
	const docs = 30000
	// The documents are written once: the engines' imports only read them.
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "orders.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	orderLines(f, 0, docs)
	f.Close()
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own svc and checkpoint
			base := bulkSvc(t, engine)
			cp := filepath.Join(t.TempDir(), "import.checkpoint")

			g, proxied := newCommittedGate(t, base, 5)
			cmd, _ := startImportUntil(t, g.committed, "a batch past the gate committed",
				"--url", proxied, "--model", "orders/1", "--create-model",
				"--checkpoint", cp, "--connections", "4", "--progress", "none", dir)
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()
			close(g.release)
			mid := entityCount(t, base, "orders/1")
			if mid <= 5*1000 || mid >= docs {
				t.Fatalf("after the kill %d entities, want more than the 5 batches the importer saw answered", mid)
			}

			code, _, errOut := bulkRun(t, nil, "import", "--url", base, "--model", "orders/1",
				"--checkpoint", cp, "--connections", "4", "--progress", "none", dir)
			if code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, errOut)
			}
			seqs := exportedSeqs(t, base, "orders/1")
			if len(seqs) != docs {
				t.Fatalf("exported %d entities, want %d (a withheld batch was created twice or lost)", len(seqs), docs)
			}
			for i, s := range seqs {
				if s != i {
					t.Fatalf("seq %d at position %d: a document is missing or twice", s, i)
				}
			}
		})
	}
}
