package main

import (
	"bufio"
	"bytes"
	"context"
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
)

// TestChangeFeedSurvivesSIGKILL runs the real binary on SQLite and on
// PostgreSQL with a durable subscription, kills it with SIGKILL while
// single creates are in flight, three times, and after each restart reads
// the subscription's stream from its cursor: every acknowledged create
// has its CREATE event, and an update refused with 412 (rolled back)
// has none.
func TestChangeFeedSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := svcBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
			env := []string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
				fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error"}
			if engine == "sqlite" {
				env = append(env, "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+filepath.Join(t.TempDir(), "svc.db"))
			} else {
				env = append(env, "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+crashTestDatabase(t))
			}
			start := func() *exec.Cmd { return startServe(t, bin, adminPort, env...) }
			feedCrashRounds(t, start, fmt.Sprintf("http://127.0.0.1:%d/api", httpPort))
		})
	}
}

func feedCrashRounds(t *testing.T, start func() *exec.Cmd, base string) {
	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path string, body []byte, hdr ...string) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	cmd := start()
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"w":1}`},
		{"PUT", "/model/order/1/lock", ""},
	} {
		if code, b, err := call(step.method, step.path, []byte(step.body)); err != nil || code != 200 {
			t.Fatalf("%s %s: %d %s %v", step.method, step.path, code, b, err)
		}
	}
	code, b, err := call("POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1}}`))
	if err != nil || code != 201 {
		t.Fatalf("subscribe: %d %s %v", code, b, err)
	}
	var sub struct{ ID string }
	json.Unmarshal(b, &sub)

	acked := map[string]bool{}
	var rolledBack []string
	for round := 1; round <= 3; round++ {
		// One update refused by its precondition: rolled back, no event.
		code, b, err := call("POST", "/entity/JSON/order/1", []byte(`{"n":0,"w":9}`))
		if err != nil || code != 200 {
			t.Fatalf("round %d: create: %d %s %v", round, code, b, err)
		}
		var res []struct{ EntityIDs []string }
		json.Unmarshal(b, &res)
		id := res[0].EntityIDs[0]
		acked[id] = true
		if code, b, _ := call("PUT", "/entity/JSON/"+id, []byte(`{"n":1,"w":9}`), "If-Match", "00000000-0000-1000-8000-000000000000"); code != 412 {
			t.Fatalf("round %d: update with a stale If-Match: %d %s", round, code, b)
		}
		rolledBack = append(rolledBack, id)

		var mu sync.Mutex
		n := 0
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					code, b, err := call("POST", "/entity/JSON/order/1", []byte(fmt.Sprintf(`{"n":%d,"w":%d}`, i, w)))
					if err != nil || code != 200 {
						return // killed under us
					}
					var res []struct{ EntityIDs []string }
					if json.Unmarshal(b, &res) != nil || len(res) != 1 {
						return
					}
					mu.Lock()
					for _, id := range res[0].EntityIDs {
						acked[id] = true
					}
					n++
					mu.Unlock()
				}
			}(w)
		}
		await.Until(t, 60*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return n >= 40
		}, "round %d: 40 creates acknowledged", round)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		close(stop)
		wg.Wait()

		cmd = start()
		// Nothing was ever acknowledged: the stream starts at the cursor
		// the subscription was created with, and must hold every create.
		seen, updates := readFeed(t, base, sub.ID, acked)
		missing := 0
		for id := range acked {
			if !seen[id] {
				missing++
			}
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged creates have no event after SIGKILL", round, missing, len(acked))
		}
		for _, id := range rolledBack {
			if updates[id] {
				t.Fatalf("round %d: the rolled-back update of %s has an event", round, id)
			}
		}
		t.Logf("round %d: %d acknowledged creates, all with their event", round, len(acked))
	}
	stopSvc(cmd)
}

// readFeed reads the subscription's stream until every id of want has a
// CREATE event (bounded at 60 s) and returns the CREATE and UPDATE ids.
func readFeed(t *testing.T, base, id string, want map[string]bool) (creates, updates map[string]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/subscriptions/"+id+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	creates, updates = map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct{ EntityID, Kind string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case "CREATE":
			creates[ev.EntityID] = true
		case "UPDATE":
			updates[ev.EntityID] = true
		}
		done := true
		for id := range want {
			if !creates[id] {
				done = false
				break
			}
		}
		if done {
			return creates, updates
		}
	}
	return creates, updates
}
