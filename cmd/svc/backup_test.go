package main

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"svc/internal/await"
	"svc/internal/testkeys"
)

// TestSQLiteBackupWhileWriting: `svc backup --to FILE` copies the running
// svc's SQLite file while writers keep creating entities; svc started on
// the copy serves the same models, workflows, IAM state (clients,
// keypairs) and every entity acknowledged before the backup began, and
// nothing the original lacks. A second backup to the same file is refused;
// on memory and PostgreSQL the command says what to use instead.
func TestSQLiteBackupWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := svcBinary(t)
	dir := t.TempDir()
	path, copyPath := filepath.Join(dir, "svc.db"), filepath.Join(dir, "copy.db")
	keyFile := testkeys.File(t, 5)
	env := func(p string) []string {
		return []string{"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile, "SVC_BOOTSTRAP_CLIENT_ID=boot",
			"SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret", "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH=" + p, "SVC_SUPPRESS_BANNER=true"}
	}
	p := startJWTProc(t, env(path))
	admin := "Bearer " + tokenFor(t, p.base, "boot", "boot-secret")
	do := func(base, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", admin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	must := func(base, method, path, body string) string {
		t.Helper()
		code, b := do(base, method, path, body)
		if code != 200 {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
		return b
	}
	must(p.base, "POST", "/model/import/JSON/SAMPLE_DATA/bk/1", `{"n":1,"s":"x"}`)
	must(p.base, "POST", "/model/bk/1/workflow/import", `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"wf","initialState":"NEW",
		"states":{"NEW":{"transitions":[{"name":"go","next":"DONE","manual":true}]},"DONE":{"transitions":[]}}}]}`)
	must(p.base, "PUT", "/model/bk/1/lock", "")
	must(p.base, "POST", "/oauth/keys/keypair", `{"audience":"client"}`)
	must(p.base, "POST", "/clients", "")

	// Writers run before, during and after the backup.
	var mu sync.Mutex
	var acked []string
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				code, b := do(p.base, "POST", "/entity/JSON/bk/1", fmt.Sprintf(`{"n":%d,"s":"w%d"}`, i, w))
				if code != 200 {
					t.Errorf("create during backup: %d %s", code, b)
					return
				}
				mu.Lock()
				acked = append(acked, between(b, `"entityIds":["`, `"`))
				mu.Unlock()
			}
		}(w)
	}
	await.Until(t, await.Long, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 200 }, "acknowledged writes")
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	bk := exec.Command(bin, "backup", "--to", copyPath)
	bk.Env = cleanEnv(t, "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+path)
	out, err := bk.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "integrity ok") {
		t.Fatalf("backup: %v %s", err, out)
	}
	await.Until(t, await.Long, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= len(before)+50 }, "acknowledged writes") // writers were never stopped
	stop.Store(true)
	wg.Wait()
	bk = exec.Command(bin, "backup", "--to", copyPath)
	bk.Env = cleanEnv(t, "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+path)
	if out, err := bk.CombinedOutput(); err == nil || !strings.Contains(string(out), "exists") {
		t.Errorf("backup over an existing file: %v %s", err, out)
	}

	// The same state on the copy, from a second svc on the copy.
	q := startJWTProc(t, env(copyPath))
	for _, path := range []string{"/model/", "/model/bk/1/workflow/export", "/oauth/keys/keypair/current", "/clients", "/.well-known/jwks.json"} {
		a, b := must(p.base, "GET", path, ""), must(q.base, "GET", path, "")
		if path == "/clients" {
			// The bootstrap client is configuration: each start rewrites it.
			a, b = lastUpdate.ReplaceAllString(a, ""), lastUpdate.ReplaceAllString(b, "")
		}
		if a != b {
			t.Errorf("GET %s differs:\noriginal %s\ncopy     %s", path, a, b)
		}
	}
	list := func(base string) map[string]string {
		out := map[string]string{}
		for page := 0; ; page++ {
			b := must(base, "GET", fmt.Sprintf("/entity/bk/1?pageSize=1000&pageNumber=%d", page), "")
			ids := strings.Split(b, `"id":"`)
			if len(ids) < 2 {
				return out
			}
			for _, part := range ids[1:] {
				id, _, _ := strings.Cut(part, `"`)
				out[id] = must(base, "GET", "/entity/"+id, "")
			}
		}
	}
	orig, cp := list(p.base), list(q.base)
	for _, id := range before {
		if _, ok := cp[id]; !ok {
			t.Fatalf("entity %s acknowledged before the backup is missing from the copy", id)
		}
	}
	var ids []string
	for id, doc := range cp {
		if orig[id] != doc {
			t.Fatalf("entity %s differs between the copy and the original:\n%s\n%s", id, doc, orig[id])
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	t.Logf("copy holds %d of the original's %d entities (%d acknowledged before the backup started)", len(cp), len(orig), len(before))

	for _, c := range []struct{ backend, want string }{{"memory", "nothing to back up"}, {"postgres", "pg_dump"}} {
		bk := exec.Command(bin, "backup", "--to", filepath.Join(dir, "x.db"))
		bk.Env = cleanEnv(t, "SVC_STORAGE_BACKEND="+c.backend, "SVC_POSTGRES_URL=postgres://127.0.0.1:1/x")
		if out, err := bk.CombinedOutput(); err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("backup on %s: %v %s", c.backend, err, out)
		}
	}
}

var lastUpdate = regexp.MustCompile(`"lastUpdateDate":"[^"]*"`)
