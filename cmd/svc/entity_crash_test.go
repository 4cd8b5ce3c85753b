package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"svc/internal/await"
	"sync"
	"syscall"
	"testing"
	"time"

	"svc/storage/pgtest"
	"svc/storage/sqlite"
)

// crashTestDatabase creates a database for one test and drops it after.
func crashTestDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.New(t, "crash")
}

func startCrashSvc(t *testing.T, bin, dbURL string, httpPort, adminPort int) *exec.Cmd {
	t.Helper()
	return startServe(t, bin, adminPort, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)),
		"SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+dbURL, "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error")
}

// TestCrashDuringCollectionIngestLosesNothingAcknowledged runs the real
// binary on PostgreSQL, kills it with SIGKILL while collection creates are
// in flight, restarts it and checks that every acknowledged entity is
// readable and that every visible transaction is a whole chunk.
func TestCrashDuringCollectionIngestLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := svcBinary(t)
	dbURL := crashTestDatabase(t)
	httpPort, adminPort := freePort(t), freePort(t)
	crashCollection(t, func() *exec.Cmd { return startCrashSvc(t, bin, dbURL, httpPort, adminPort) }, httpPort)
}

// crashCollection runs one round of the collection-ingest crash test: start
// svc, ingest until some requests are acknowledged, SIGKILL it mid-flight,
// start it again and check every acknowledged entity is there and every
// visible transaction whole. It stops the restarted svc at the end.
func crashCollection(t *testing.T, start func() *exec.Cmd, httpPort int) {
	t.Helper()
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	cmd := start()
	client := &http.Client{Timeout: 60 * time.Second}
	post := func(method, path string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/reading/1", `{"sensor":"s","seq":1,"batch":1,"value":1.5,"pad":"x"}`},
		{"PUT", "/model/reading/1/lock", ""},
	} {
		// A later round finds the model there and locked already.
		if code, b, err := post(step.method, step.path, []byte(step.body)); err != nil || (code != 200 && code != 409) {
			t.Fatalf("%s %s: %d %s %v", step.method, step.path, code, b, err)
		}
	}

	const chunk, perRequest = 100, 1000
	pad := strings.Repeat("p", 200)
	var mu sync.Mutex
	acked := map[string]bool{}
	ackedRequests := 0
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for batch := 0; ; batch++ {
				select {
				case <-stop:
					return
				default:
				}
				var sb strings.Builder
				sb.WriteByte('[')
				for i := 0; i < perRequest; i++ {
					if i > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, `{"sensor":"w%d","seq":%d,"batch":%d,"value":%d.25,"pad":"%s"}`, w, i, batch, i, pad)
				}
				sb.WriteByte(']')
				code, b, err := post("POST", fmt.Sprintf("/entity/JSON/reading/1?transactionWindow=%d", chunk), []byte(sb.String()))
				if err != nil || code != 200 {
					return // the server died under us
				}
				var res []struct {
					EntityIDs []string `json:"entityIds"`
					Error     any      `json:"error"`
				}
				if err := json.Unmarshal(b, &res); err != nil {
					t.Errorf("ack body: %v", err)
					return
				}
				mu.Lock()
				for _, r := range res {
					for _, id := range r.EntityIDs {
						acked[id] = true
					}
				}
				ackedRequests++
				mu.Unlock()
			}
		}(w)
	}
	// Kill once some requests were acknowledged, while others are in flight.
	await.Until(t, 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ackedRequests >= 4
	}, "4 acknowledged ingest requests")
	// Not a wait for an event: a short pause so the kill also lands on
	// requests sent after the fourth acknowledgement.
	time.Sleep(30 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(stop)
	wg.Wait()

	mu.Lock()
	want := len(acked)
	mu.Unlock()
	restarted := start()
	defer stopSvc(restarted)

	// Read everything back after the restart.
	seen := map[string]bool{}
	perTx := map[string]int{}
	for page := 0; ; page++ {
		code, b, err := post("GET", fmt.Sprintf("/entity/reading/1?pageSize=10000&pageNumber=%d", page), nil)
		if err != nil || code != 200 {
			t.Fatalf("list after restart: %d %v %s", code, err, b)
		}
		var list []struct {
			Meta struct {
				ID            string `json:"id"`
				TransactionID string `json:"transactionId"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			break
		}
		for _, e := range list {
			seen[e.Meta.ID] = true
			perTx[e.Meta.TransactionID]++
		}
	}
	missing := 0
	for id := range acked {
		if !seen[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged entities are gone after the crash", missing, want)
	}
	for tx, n := range perTx {
		if n != chunk {
			t.Errorf("transaction %s has %d entities visible, want a whole chunk of %d", tx, n, chunk)
		}
	}
	// One acknowledged id read individually, to be sure reads work too.
	for id := range acked {
		if code, b, err := post("GET", "/entity/"+id, nil); err != nil || code != 200 {
			t.Fatalf("GET acknowledged %s: %d %s %v", id, code, b, err)
		}
		break
	}
	t.Logf("acknowledged %d entities in %d requests; %d visible after restart in %d chunks", want, ackedRequests, len(seen), len(perTx))
}

// TestCrashDuringSingleCreatesLosesNothingAcknowledged: concurrent single
// creates share transactions on PostgreSQL (group commit); SIGKILL while
// they are in flight, restart, and every acknowledged create is there.
func TestCrashDuringSingleCreatesLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := svcBinary(t)
	dbURL := crashTestDatabase(t)
	httpPort, adminPort := freePort(t), freePort(t)
	crashSingles(t, func() *exec.Cmd { return startCrashSvc(t, bin, dbURL, httpPort, adminPort) }, httpPort)
}

// crashSingles runs one round of the single-create crash test: 16
// concurrent creators, SIGKILL once 300 are acknowledged, start again and
// read every acknowledged one back. It leaves the restarted svc running.
func crashSingles(t *testing.T, start func() *exec.Cmd, httpPort int) {
	t.Helper()
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	cmd := start()
	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/single/1", `{"w":1,"seq":1,"pad":"x"}`},
		{"PUT", "/model/single/1/lock", ""},
	} {
		if code, b, err := call(step.method, step.path, []byte(step.body)); err != nil || (code != 200 && code != 409) {
			t.Fatalf("%s %s: %d %s %v", step.method, step.path, code, b, err)
		}
	}
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	pad := strings.Repeat("p", 300)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				code, b, err := call("POST", "/entity/JSON/single/1", []byte(fmt.Sprintf(`{"w":%d,"seq":%d,"pad":"%s"}`, w, seq, pad)))
				if err != nil || code != 200 {
					return // the server died under us
				}
				var res []struct {
					EntityIDs []string `json:"entityIds"`
				}
				if err := json.Unmarshal(b, &res); err != nil || len(res) != 1 || len(res[0].EntityIDs) != 1 {
					t.Errorf("ack body %s: %v", b, err)
					return
				}
				mu.Lock()
				acked = append(acked, res[0].EntityIDs[0])
				mu.Unlock()
			}
		}(w)
	}
	await.Until(t, 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 300
	}, "300 acknowledged creates")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(stop)
	wg.Wait()
	restarted := start()
	defer stopSvc(restarted)
	mu.Lock()
	defer mu.Unlock()
	for _, id := range acked {
		if code, b, err := call("GET", "/entity/"+id, nil); err != nil || code != 200 {
			t.Fatalf("acknowledged create %s gone after the crash: %d %s %v", id, code, b, err)
		}
	}
	t.Logf("%d acknowledged single creates all readable after SIGKILL and restart", len(acked))
}

// stopSvc ends a started svc with SIGTERM and waits for it.
func stopSvc(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}

// TestSQLiteCrashSafety: the SQLite backend under SIGKILL, three times
// during concurrent single creates and three times during collection
// ingest, on one file: every acknowledged entity is readable after each
// restart, every visible collection chunk is whole, and the file passes
// PRAGMA integrity_check at the end.
func TestSQLiteCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := svcBinary(t)
	path := filepath.Join(t.TempDir(), "svc.db")
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	start := func() *exec.Cmd {
		return startServe(t, bin, adminPort, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
			fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+path,
			"SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error")
	}
	for round := 1; round <= 3; round++ {
		t.Logf("single creates, round %d", round)
		crashSingles(t, start, httpPort)
		if t.Failed() {
			return
		}
	}
	for round := 1; round <= 3; round++ {
		t.Logf("collection ingest, round %d", round)
		crashCollection(t, start, httpPort)
		if t.Failed() {
			return
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := sqlite.IntegrityCheck(context.Background(), db); err != nil {
		t.Fatalf("after six kills: %v", err)
	}
	var entities, revisions int
	db.QueryRow("SELECT count(*) FROM entities").Scan(&entities)
	db.QueryRow("SELECT count(*) FROM revisions").Scan(&revisions)
	t.Logf("integrity_check ok after six SIGKILLs: %d entities, %d revisions", entities, revisions)
}
