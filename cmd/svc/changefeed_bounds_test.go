package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"svc/internal/await"
)

// feedNode is one svc process for the change-feed tests.
type feedNode struct {
	t    *testing.T
	base string
}

func startFeedNode(t *testing.T, env ...string) *feedNode {
	t.Helper()
	httpPort, adminPort := freePort(t), freePort(t)
	startServe(t, svcBinary(t), adminPort, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error"}, env...)...)
	return &feedNode{t: t, base: fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)}
}

func (n *feedNode) call(method, path, body string) (int, []byte) {
	n.t.Helper()
	req, _ := http.NewRequest(method, n.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := clusterClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (n *feedNode) must(method, path, body string, want int) []byte {
	n.t.Helper()
	code, b := n.call(method, path, body)
	if code != want {
		n.t.Fatalf("%s %s: %d %s (want %d)", method, path, code, b, want)
	}
	return b
}

// orderModel imports and locks model order/1.
func (n *feedNode) orderModel() {
	n.must("POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"w":1}`, 200)
	n.must("PUT", "/model/order/1/lock", "", 200)
}

type feedSub struct {
	ID       string `json:"id"`
	Detached *struct {
		Reason string `json:"reason"`
		Events int64  `json:"events"`
	} `json:"detached"`
	Lag *struct {
		Events int64 `json:"events"`
	} `json:"lag"`
}

func (n *feedNode) subscribe(body string) feedSub {
	n.t.Helper()
	var s feedSub
	if err := json.Unmarshal(n.must("POST", "/subscriptions", body, 201), &s); err != nil {
		n.t.Fatal(err)
	}
	return s
}

// sub reads a subscription; ok is false once it is gone (404).
func (n *feedNode) sub(id string) (feedSub, bool) {
	n.t.Helper()
	code, b := n.call("GET", "/subscriptions/"+id, "")
	if code == 404 {
		return feedSub{}, false
	}
	if code != 200 {
		n.t.Fatalf("GET subscription: %d %s", code, b)
	}
	var s feedSub
	if err := json.Unmarshal(b, &s); err != nil {
		n.t.Fatal(err)
	}
	return s, true
}

// TestChangeFeedBoundsSettings runs the binary with small bounds. With
// SVC_CHANGEFEED_BACKLOG_MAX_EVENTS=2 and a sweep every 100ms, a durable
// subscription owing 4 events is detached (BACKLOG_EVENTS), its log cut
// to the 2 newest, and its attached SSE consumer cut with BACKLOG_EXCEEDED.
// With SVC_CHANGEFEED_RETENTION=1s and SVC_CHANGEFEED_SUBSCRIPTION_TTL=1s,
// a subscription with no consumer is deleted while one with its own ttl
// of an hour stays, and its events are pruned (detached BACKLOG_AGE).
func TestChangeFeedBoundsSettings(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Run("backlog ceiling", func(t *testing.T) {
		n := startFeedNode(t, "SVC_CHANGEFEED_BACKLOG_MAX_EVENTS=2", "SVC_CHANGEFEED_SWEEP_INTERVAL=100ms")
		n.orderModel()
		s := n.subscribe(`{"filter":{"modelName":"order","modelVersion":1}}`)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", n.base+"/subscriptions/"+s.ID+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		cut := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			ev := ""
			for sc.Scan() {
				line := sc.Text()
				if v, ok := strings.CutPrefix(line, "event: "); ok {
					ev = v
				}
				if v, ok := strings.CutPrefix(line, "data: "); ok && ev == "cut" {
					cut <- v
					return
				}
			}
			cut <- ""
		}()
		for i := 0; i < 4; i++ {
			n.must("POST", "/entity/JSON/order/1", fmt.Sprintf(`{"n":%d,"w":1}`, i), 200)
		}
		var got feedSub
		await.Until(t, await.Long, func() bool {
			got, _ = n.sub(s.ID)
			return got.Detached != nil
		}, "subscription detached")
		if got.Detached.Reason != "BACKLOG_EVENTS" || got.Detached.Events < 3 {
			t.Fatalf("detached %+v", *got.Detached)
		}
		await.Until(t, await.Long, func() bool {
			got, _ = n.sub(s.ID)
			return got.Lag != nil && got.Lag.Events <= 2
		}, "the log pruned to the ceiling")
		select {
		case data := <-cut:
			if !strings.Contains(data, "BACKLOG_EXCEEDED") {
				t.Fatalf("final event of the attached consumer: %q", data)
			}
		case <-time.After(await.Long):
			t.Fatal("the attached consumer was not cut")
		}
	})
	t.Run("retention and ttl", func(t *testing.T) {
		n := startFeedNode(t, "SVC_CHANGEFEED_RETENTION=1s", "SVC_CHANGEFEED_SUBSCRIPTION_TTL=1s", "SVC_CHANGEFEED_SWEEP_INTERVAL=100ms")
		n.orderModel()
		gone := n.subscribe(`{"filter":{"modelName":"order","modelVersion":1}}`)
		kept := n.subscribe(`{"filter":{"modelName":"order","modelVersion":1},"ttl":"1h"}`)
		for i := 0; i < 3; i++ {
			n.must("POST", "/entity/JSON/order/1", fmt.Sprintf(`{"n":%d,"w":1}`, i), 200)
		}
		await.Until(t, await.Long, func() bool { _, ok := n.sub(gone.ID); return !ok }, "the subscription past its ttl deleted")
		var got feedSub
		await.Until(t, await.Long, func() bool {
			var ok bool
			got, ok = n.sub(kept.ID)
			if !ok {
				t.Fatal("the subscription with a ttl of 1h was deleted")
			}
			return got.Lag != nil && got.Lag.Events == 0 && got.Detached != nil
		}, "events pruned past the retention")
		if got.Detached.Reason != "BACKLOG_AGE" {
			t.Fatalf("detached %+v", *got.Detached)
		}
	})
}
