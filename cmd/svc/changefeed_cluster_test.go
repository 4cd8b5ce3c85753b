package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"svc/internal/await"
	"svc/storage/pgtest"
)

// sseReader reads one change-feed stream in the background: the cursor
// of the last event (what EventSource sends back as Last-Event-ID) and
// the entity ids of the CREATE events, deduplicated by eventId.
type sseReader struct {
	mu      sync.Mutex
	last    string
	events  map[string]bool // eventId
	creates map[string]bool // entityId
	done    chan struct{}
	cancel  context.CancelFunc
}

func openSSE(t *testing.T, url, lastEventID string, into *sseReader) *sseReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	r := into
	if r == nil {
		r = &sseReader{events: map[string]bool{}, creates: map[string]bool{}}
	}
	r.done, r.cancel = make(chan struct{}), cancel
	go func() {
		defer close(r.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var ev struct{ EventID, EntityID, Kind, Cursor string }
			if json.Unmarshal([]byte(data), &ev) != nil || ev.EventID == "" {
				continue
			}
			r.mu.Lock()
			r.events[ev.EventID] = true
			if ev.Kind == "CREATE" {
				r.creates[ev.EntityID] = true
			}
			if id != "" {
				r.last = id
			}
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *sseReader) has(ids map[string]bool) (missing int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range ids {
		if !r.creates[id] {
			missing++
		}
	}
	return missing
}

// TestClusterChangeFeed runs two svc nodes on one PostgreSQL database.
// A subscription created on node B makes node A record its model's
// writes (the watched set crosses nodes over the cluster bus); a durable
// SSE consumer and a live /changes stream on B receive the creates
// committed on A. Then, with writers on A and the durable consumer
// attached to B, B is killed with SIGKILL; the consumer reconnects to A
// with Last-Event-ID and, deduplicating by eventId, has an event for
// every create A acknowledged.
func TestClusterChangeFeed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster of real binaries")
	}
	db := pgtest.New(t, "cluster_feed")
	nodes := startTestCluster(t, db, []string{"a", "b"})
	a, b := nodes[0], nodes[1]
	a.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"w":1}`)
	a.must(t, "PUT", "/model/order/1/lock", "")

	code, body := b.call(t, "POST", "/subscriptions", `{"filter":{"modelName":"order","modelVersion":1}}`)
	if code != 201 {
		t.Fatalf("subscribe on b: %d %s", code, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)

	// A starts recording: the announcement crosses the bus (or the
	// minute's full sync); until then A's writes are not recorded, so
	// write until one shows in the subscription's lag.
	first := map[string]bool{}
	await.Until(t, await.Long, func() bool {
		for _, id := range createdIDs(t, a.must(t, "POST", "/entity/JSON/order/1", `{"n":0,"w":0}`)) {
			first[id] = true
		}
		var s struct{ Lag struct{ Events int } }
		json.Unmarshal(b.must(t, "GET", "/subscriptions/"+sub.ID, ""), &s)
		return s.Lag.Events > 0
	}, "node a records the model after a subscription was created on node b")

	durable := openSSE(t, b.base+"/subscriptions/"+sub.ID+"/events", "", nil)
	live := openSSE(t, b.base+"/changes?modelName=order&modelVersion=1&kinds=CREATE", "", nil)
	onA := map[string]bool{}
	for i := 0; i < 5; i++ {
		for _, id := range createdIDs(t, a.must(t, "POST", "/entity/JSON/order/1", fmt.Sprintf(`{"n":%d,"w":1}`, i))) {
			onA[id] = true
		}
	}
	await.Until(t, await.Long, func() bool { return durable.has(onA) == 0 && live.has(onA) == 0 },
		"the durable and live consumers on b receive the creates committed on a")
	live.cancel()

	// Writers on a; the durable consumer on b; b is killed.
	var mu sync.Mutex
	acked := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := a.try("POST", "/entity/JSON/order/1", fmt.Sprintf(`{"n":%d,"w":%d}`, i, w))
				if err != nil || code != 200 {
					continue
				}
				var res []struct {
					EntityIDs []string `json:"entityIds"`
				}
				if json.Unmarshal(body, &res) != nil {
					continue
				}
				mu.Lock()
				for _, r := range res {
					for _, id := range r.EntityIDs {
						acked[id] = true
					}
				}
				mu.Unlock()
			}
		}(w)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	await.Until(t, await.Long, func() bool { return count() >= 30 }, "30 creates acknowledged on a")
	// Some of them reached the consumer on b before the kill.
	await.Until(t, await.Long, func() bool {
		durable.mu.Lock()
		defer durable.mu.Unlock()
		return len(durable.creates) > len(onA)+len(first)
	},
		"the consumer on b received some of the writers' events")
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	select {
	case <-durable.done:
	case <-time.After(await.Long):
		t.Fatal("the consumer's stream did not end when its node was killed")
	}
	await.Until(t, await.Long, func() bool { return count() >= 60 }, "60 creates acknowledged on a")
	close(stop)
	wg.Wait()

	durable.mu.Lock()
	last := durable.last
	before := len(durable.events)
	durable.mu.Unlock()
	if last == "" {
		t.Fatal("the consumer on b received no event id before the kill")
	}
	// Reconnect to a, resuming after the last event received on b.
	mu.Lock()
	want := map[string]bool{}
	for id := range acked {
		want[id] = true
	}
	mu.Unlock()
	resumed := openSSE(t, a.base+"/subscriptions/"+sub.ID+"/events", last, durable)
	defer resumed.cancel()
	// The failure names the count still missing at the end (the last
	// value), not the count when the wait began.
	await.Value(t, await.Long, func() (int, bool) { n := resumed.has(want); return n, n == 0 },
		"after reconnecting to a with Last-Event-ID, every one of the %d creates acknowledged on a has its event (last: the number missing)", len(want))
	t.Logf("%d creates acknowledged on a while b died; %d events received on b before the kill, all acknowledged creates seen after resuming on a",
		len(want), before)
}

// TestClusterLiveChangesWithoutSubscription runs two svc nodes on one
// PostgreSQL database with no stored subscription: a live /changes
// stream attached to node B makes node A record the model (B announces
// its live streams' models on the cluster bus), so the stream receives
// an event for every create committed on A.
func TestClusterLiveChangesWithoutSubscription(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of real binaries")
	}
	db := pgtest.New(t, "cluster_live")
	nodes := startTestCluster(t, db, []string{"a", "b"})
	a, b := nodes[0], nodes[1]
	a.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"w":1}`)
	a.must(t, "PUT", "/model/order/1/lock", "")
	if code, body := b.call(t, "GET", "/subscriptions", ""); code != 200 || strings.Contains(string(body), `"id"`) {
		t.Fatalf("want no stored subscription: %d %s", code, body)
	}

	live := openSSE(t, b.base+"/changes?modelName=order&modelVersion=1", "", nil)
	defer live.cancel()
	// The announcement crosses the bus; until A has it, A's creates are
	// not recorded (a live stream starts when it attaches): write until
	// one reaches the stream.
	probes := map[string]bool{}
	await.Until(t, await.Long, func() bool {
		for _, id := range createdIDs(t, a.must(t, "POST", "/entity/JSON/order/1", `{"n":0,"w":0}`)) {
			probes[id] = true
		}
		return live.has(probes) < len(probes)
	}, "a create on node a reaches the live stream on node b")

	onA := map[string]bool{}
	for i := 0; i < 20; i++ {
		for _, id := range createdIDs(t, a.must(t, "POST", "/entity/JSON/order/1", fmt.Sprintf(`{"n":%d,"w":1}`, i))) {
			onA[id] = true
		}
	}
	await.Until(t, await.Long, func() bool { return live.has(onA) == 0 },
		"the live stream on b receives every create committed on a (%d missing of %d)", live.has(onA), len(onA))
}
