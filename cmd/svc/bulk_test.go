package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/internal/testkeys"
	"svc/storage/pgtest"
)

// bulkSvc starts the real binary on engine and returns its API base URL.
func bulkSvc(t *testing.T, engine string) string {
	t.Helper()
	bin := svcBinary(t)
	httpPort, adminPort := freePort(t), freePort(t)
	env := []string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error"}
	if engine == "postgres" {
		env = append(env, "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+pgtest.New(t, "bulk"))
	}
	if engine == "sqlite" {
		env = append(env, "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+filepath.Join(t.TempDir(), "svc.db"))
	}
	startServe(t, bin, adminPort, env...)
	return fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
}

// orderLines writes n order documents, numbered by seq from first. The
// lines are appended with strconv rather than printed with fmt: the
// import tests write hundreds of thousands of them, and under -race fmt
// cost seconds of CPU.
func orderLines(w io.Writer, first, n int) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte
	for i := first; i < first+n; i++ {
		b = append(b[:0], `{"seq":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"customer":"c`...)
		b = strconv.AppendInt(b, int64(i%97), 10)
		b = append(b, `","amount":`...)
		b = strconv.AppendInt(b, int64(i%1000), 10)
		b = append(b, '.', byte('0'+i%100/10), byte('0'+i%10))
		b = append(b, `,"status":"NEW","lines":[{"sku":"s`...)
		b = strconv.AppendInt(b, int64(i%13), 10)
		b = append(b, `","qty":`...)
		b = strconv.AppendInt(b, int64(1+i%5), 10)
		b = append(b, "}]}\n"...)
		bw.Write(b)
	}
	bw.Flush()
}

// bulkRun runs `svc args...` and returns its exit code, stdout and stderr.
func bulkRun(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(svcBinary(t), args...)
	cmd.Env = cleanEnv(t)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func entityCount(t *testing.T, base, model string) int {
	t.Helper()
	st, body := apiCall(t, base, "GET", "/entity/stats/"+model, "")
	if st != 200 {
		t.Fatalf("stats %s: %d %s", model, st, body)
	}
	var c struct {
		Count int `json:"count"`
	}
	json.Unmarshal([]byte(body), &c)
	return c.Count
}

// exportLines exports a model with the CLI and calls line with each line
// of the export.
func exportLines(t *testing.T, base, model string, line func([]byte)) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export.ndjson")
	code, _, stderr := bulkRun(t, nil, "export", "--url", base, "--model", model, "-o", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// exportedSeqs exports a model with the CLI and returns every seq value,
// sorted. Each line is decoded once, straight to its seq: the import tests
// export 200 000 entities per engine, and decoding each envelope and then
// its data again was a fifth of the package's CPU under -race.
func exportedSeqs(t *testing.T, base, model string) []int {
	t.Helper()
	var seqs []int
	exportLines(t, base, model, func(l []byte) {
		var env struct {
			Data struct {
				Seq *int `json:"seq"`
			} `json:"data"`
		}
		if err := json.Unmarshal(l, &env); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		if env.Data.Seq == nil {
			t.Fatalf("export line %q: no data.seq", l)
		}
		seqs = append(seqs, *env.Data.Seq)
	})
	sort.Ints(seqs)
	return seqs
}

// exportedDocs exports a model with the CLI and returns its raw data
// documents, sorted.
func exportedDocs(t *testing.T, base, model string) []string {
	t.Helper()
	var docs []string
	exportLines(t, base, model, func(l []byte) {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(l, &env); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		docs = append(docs, string(env.Data))
	})
	sort.Strings(docs)
	return docs
}

// gate is a reverse proxy in front of svc that lets the first `open`
// NDJSON creates through and holds the rest until released: a slow link
// the test controls, so an import is interrupted mid-way on any machine.
type gate struct {
	open     int64
	passed   atomic.Int64
	held     atomic.Int64
	release  chan struct{}
	heldOnce sync.Once
	heldCh   chan struct{}
}

func newGate(t *testing.T, target string, open int64) (*gate, string) {
	g := &gate{open: open, release: make(chan struct{}), heldCh: make(chan struct{})}
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && strings.Contains(r.URL.Path, "/entity/ndjson/") {
			if g.passed.Add(1) > g.open {
				g.held.Add(1)
				g.heldOnce.Do(func() { close(g.heldCh) })
				<-g.release
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return g, srv.URL + u.Path
}

// startImportUntil starts `svc import args...` and returns once reached is
// closed (a gate in front of svc saw the import get that far), failing the
// test, with the importer's stderr, if it never is.
func startImportUntil(t *testing.T, reached <-chan struct{}, what string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(svcBinary(t), append([]string{"import"}, args...)...)
	cmd.Env = cleanEnv(t)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: not reached within 5 min: %s", what, stderr.String())
	}
	return cmd, stderr
}

func TestImportInterruptResumeExport(t *testing.T) {
	t.Parallel()
	// 200k documents in two files, one of them gzipped, written once: the
	// engines' imports only read them.
	dir := t.TempDir()
	f1, _ := os.Create(filepath.Join(dir, "a.ndjson"))
	orderLines(f1, 0, 120000)
	f1.Close()
	f2, _ := os.Create(filepath.Join(dir, "b.ndjson.gz"))
	gz, _ := gzip.NewWriterLevel(f2, gzip.BestSpeed)
	orderLines(gz, 120000, 80000)
	gz.Close()
	f2.Close()
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own svc and checkpoint
			base := bulkSvc(t, engine)
			cp := filepath.Join(t.TempDir(), "import.checkpoint")

			g, proxied := newGate(t, base, 60)
			cmd, stderr := startImportUntil(t, g.heldCh, "the import reaching request 61",
				"--url", proxied, "--model", "orders/1", "--create-model",
				"--checkpoint", cp, "--connections", "4", "--progress", "plain", "--progress-interval", "50ms", dir)
			cmd.Process.Signal(syscall.SIGINT)
			// The requests in flight complete after the interrupt and are
			// recorded; then the import stops.
			close(g.release)
			err := cmd.Wait()
			ee, _ := err.(*exec.ExitError)
			if ee == nil || ee.ExitCode() != 130 {
				t.Fatalf("interrupted import: %v, want exit 130\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "import progress") || !strings.Contains(stderr.String(), "docs/s") {
				t.Errorf("plain progress lines missing:\n%s", stderr.String())
			}
			mid := entityCount(t, base, "orders/1")
			if mid == 0 || mid >= 200000 || mid%1000 != 0 {
				t.Fatalf("after the interrupt %d entities, want whole batches and fewer than 200000", mid)
			}

			code, stdout, errOut := bulkRun(t, nil, "import", "--url", base, "--model", "orders/1",
				"--checkpoint", cp, "--connections", "4", "--progress", "none", dir)
			if code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, errOut)
			}
			if !strings.Contains(stdout, fmt.Sprintf("imported %d documents", 200000-mid)) {
				t.Errorf("resume summary %q, want %d documents imported", stdout, 200000-mid)
			}
			seqs := exportedSeqs(t, base, "orders/1")
			if len(seqs) != 200000 {
				t.Fatalf("exported %d entities, want 200000", len(seqs))
			}
			for i, s := range seqs {
				if s != i {
					t.Fatalf("seq %d at position %d: a document is missing or twice", s, i)
				}
			}
		})
	}
}

// TestImportRefusesDisorderedCheckpoint: a checkpoint whose committed
// ranges are out of order or overlap is refused before anything is sent,
// with a message naming the file, the source and the range. Before, the
// out-of-order one re-sent the 300 committed documents 0-299.
func TestImportRefusesDisorderedCheckpoint(t *testing.T) {
	t.Parallel()
	base := bulkSvc(t, "memory")
	dir := t.TempDir()
	src := filepath.Join(dir, "a.ndjson")
	f, _ := os.Create(src)
	orderLines(f, 0, 600)
	f.Close()
	cp := filepath.Join(t.TempDir(), "import.checkpoint")
	if code, _, errOut := bulkRun(t, nil, "import", "--url", base, "--model", "orders/1", "--create-model",
		"--checkpoint", cp, "--batch", "100", "--progress", "none", src); code != 0 {
		t.Fatalf("first import: exit %d\n%s", code, errOut)
	}
	saved, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(saved, &st); err != nil {
		t.Fatal(err)
	}
	rec := st["sources"].(map[string]any)[src].(map[string]any)
	for _, c := range []struct {
		name string
		done [][2]int
		want string
	}{
		{"out of order", [][2]int{{300, 600}, {0, 300}}, "range 2 [0, 300) is out of order"},
		{"overlapping", [][2]int{{0, 400}, {300, 600}}, "range 2 [300, 600) overlaps range 1 [0, 400)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec["done"] = c.done
			b, _ := json.Marshal(st)
			os.WriteFile(cp, b, 0o600)
			code, stdout, errOut := bulkRun(t, nil, "import", "--url", base, "--model", "orders/1",
				"--checkpoint", cp, "--batch", "100", "--progress", "none", src)
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout, errOut)
			}
			for _, part := range []string{cp, src, c.want, "remove it to start over"} {
				if !strings.Contains(errOut, part) {
					t.Errorf("stderr %q does not say %q", errOut, part)
				}
			}
			if n := entityCount(t, base, "orders/1"); n != 600 {
				t.Errorf("%d entities after the refused resume, want the 600 committed once", n)
			}
		})
	}
}

func TestImportBadLineAndArrays(t *testing.T) {
	t.Parallel()
	base := bulkSvc(t, "memory")
	dir := t.TempDir()
	var b bytes.Buffer
	orderLines(&b, 0, 3216)
	b.WriteString("{\"seq\": oops}\n")
	orderLines(&b, 3217, 2000)
	bad := filepath.Join(dir, "bad.ndjson")
	os.WriteFile(bad, b.Bytes(), 0o644)
	code, _, stderr := bulkRun(t, nil, "import", "--url", base, "--model", "orders/1", "--create-model", "--connections", "1",
		"--progress", "none", bad)
	if code != 1 || !strings.Contains(stderr, bad+":3217:") {
		t.Fatalf("bad line: exit %d, stderr %q; want exit 1 naming %s:3217", code, stderr, bad)
	}
	seqs := exportedSeqs(t, base, "orders/1")
	if len(seqs) != 3000 || seqs[len(seqs)-1] != 2999 {
		t.Fatalf("%d entities committed (last %v), want the 3000 before the bad line's batch", len(seqs), seqs[len(seqs)-1])
	}

	// A JSON array from standard input.
	var arr bytes.Buffer
	arr.WriteString("[\n")
	for i := range 2500 {
		if i > 0 {
			arr.WriteString(",\n")
		}
		fmt.Fprintf(&arr, `{"seq": %d, "customer": "c", "amount": 1.5, "status": "NEW", "lines": [ {"sku": "x", "qty": 1} ]}`, 10000+i)
	}
	arr.WriteString("\n]\n")
	code, stdout, stderr := bulkRun(t, &arr, "import", "--url", base, "--model", "orders/1", "--batch", "700", "--progress", "none")
	if code != 0 || !strings.Contains(stdout, "imported 2500 documents") {
		t.Fatalf("array from stdin: exit %d %q %q", code, stdout, stderr)
	}
	if n := entityCount(t, base, "orders/1"); n != 5500 {
		t.Fatalf("%d entities, want 5500", n)
	}
}

func TestExportAllRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	src := bulkSvc(t, "memory")
	dst := bulkSvc(t, "postgres")
	dir := t.TempDir()
	data := filepath.Join(dir, "orders.ndjson")
	f, _ := os.Create(data)
	orderLines(f, 0, 4321)
	f.Close()
	if code, _, stderr := bulkRun(t, nil, "import", "--url", src, "--model", "orders/1", "--create-model", "--progress", "none", data); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := bulkRun(t, nil, "import", "--url", src, "--model", "refs/2", "--create-model", "--progress", "none", data); code != 0 {
		t.Fatal(stderr)
	}
	// An unlocked model travels unlocked.
	if st, body := apiCall(t, src, "POST", "/model/import/JSON/SAMPLE_DATA/draft/1", `{"x":1}`); st != 200 {
		t.Fatal(body)
	}
	out := filepath.Join(dir, "backup")
	code, stdout, stderr := bulkRun(t, nil, "export", "--url", src, "--all", "-o", out, "--progress", "none")
	if code != 0 || !strings.Contains(stdout, "exported 3 models") {
		t.Fatalf("export --all: exit %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = bulkRun(t, nil, "import", "--url", dst, "--restore", out, "--progress", "none")
	if code != 0 || !strings.Contains(stdout, "restored orders/1: 4321 entities") {
		t.Fatalf("restore: exit %d %q %q", code, stdout, stderr)
	}
	for _, m := range []string{"orders/1", "refs/2"} {
		a := exportedDocs(t, src, m)
		b := exportedDocs(t, dst, m)
		if len(a) != 4321 || strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("%s: %d documents exported, %d restored, or they differ", m, len(a), len(b))
		}
		_, va := apiCall(t, src, "GET", "/model/export/SIMPLE_VIEW/"+m, "")
		_, vb := apiCall(t, dst, "GET", "/model/export/SIMPLE_VIEW/"+m, "")
		if va != vb {
			t.Errorf("%s: SIMPLE_VIEW differs after restore:\n%s\n%s", m, va, vb)
		}
	}
	_, v := apiCall(t, dst, "GET", "/model/export/SIMPLE_VIEW/draft/1", "")
	if !strings.Contains(v, `"currentState":"UNLOCKED"`) {
		t.Errorf("draft/1 after restore: %s", v)
	}
}

// TestImportProgressOnATerminal runs the import under a pseudo-terminal
// (script(1)) and expects the redrawn bar instead of plain lines.
func TestImportProgressOnATerminal(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatal("script(1) from util-linux is needed for the terminal test")
	}
	base := bulkSvc(t, "memory")
	data := filepath.Join(t.TempDir(), "orders.ndjson")
	f, _ := os.Create(data)
	orderLines(f, 0, 30000)
	f.Close()
	cmdline := fmt.Sprintf("%s import --url %s --model orders/1 --create-model --progress-interval 10ms --connections 1 --batch 500 %s",
		svcBinary(t), base, data)
	cmd := exec.Command(script, "-q", "-e", "-c", cmdline, "/dev/null")
	cmd.Env = append(cleanEnv(t), "TERM=xterm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("import under a terminal: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "\r") || !strings.Contains(s, "] 100%") || !strings.Contains(s, "#") || strings.Contains(s, "import progress") {
		t.Fatalf("terminal output is not a redrawn bar:\n%q", s)
	}
}

// TestImportWithClientCredentials runs svc in jwt mode: the import and
// export get their token from a machine client's id and secret, and
// without credentials they are refused.
func TestImportWithClientCredentials(t *testing.T) {
	t.Parallel()
	keyFile := testkeys.File(t, 5)
	p := startJWTProc(t, []string{"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile, "SVC_BOOTSTRAP_CLIENT_ID=boot",
		"SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret-that-is-long-enough-0123456789"})
	data := filepath.Join(t.TempDir(), "orders.ndjson")
	f, _ := os.Create(data)
	orderLines(f, 0, 2500)
	f.Close()
	code, _, stderr := bulkRun(t, nil, "import", "--url", p.base, "--model", "orders/1", "--create-model", "--progress", "none", data)
	if code != 1 || !strings.Contains(stderr, "401") {
		t.Fatalf("import without credentials: exit %d %q, want 1 and the 401", code, stderr)
	}
	cmd := exec.Command(svcBinary(t), "import", "--url", p.base, "--model", "orders/1", "--create-model", "--progress", "none", data)
	cmd.Env = cleanEnv(t, "SVC_CLI_CLIENT_ID=boot", "SVC_CLI_CLIENT_SECRET=boot-secret-that-is-long-enough-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "imported 2500 documents") {
		t.Fatalf("import with client credentials: %v %s", err, out)
	}
	tok := tokenFor(t, p.base, "boot", "boot-secret-that-is-long-enough-0123456789")
	code, stdout, stderr := bulkRun(t, nil, "export", "--url", p.base, "--token", tok, "--model", "orders/1", "--progress", "none")
	if code != 0 || strings.Count(stdout, "\n") != 2500 {
		t.Fatalf("export with a token: exit %d, %d lines, %q", code, strings.Count(stdout, "\n"), stderr)
	}
}
