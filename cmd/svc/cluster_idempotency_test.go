package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"svc/storage/pgtest"
)

// TestClusterIdempotencyKeyAcrossNodes: a key is one per tenant across the
// cluster. A create under a key on node A, repeated on node B, is answered
// from the stored response (same status and body, Idempotent-Replayed) and
// writes nothing; the same key with another body on B is 422; an update
// keyed on B replays on A.
func TestClusterIdempotencyKeyAcrossNodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of svc processes")
	}
	db := pgtest.New(t, "cluster_idem")
	nodes := startTestCluster(t, db, []string{"a", "b"}, "SVC_SCHEDULER_ENABLED=false")
	a, b := nodes[0], nodes[1]
	a.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/idem/1", `{"n":1}`)
	a.must(t, "PUT", "/model/idem/1/lock", "")

	keyed := func(n *clusterNode, method, path, body, key string) (int, []byte, string) {
		t.Helper()
		req, err := http.NewRequest(method, n.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := clusterClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out, resp.Header.Get("Idempotent-Replayed")
	}

	st1, body1, rep1 := keyed(a, "POST", "/entity/JSON/idem/1", `{"n":7}`, "order-7")
	if st1 != 200 || rep1 != "" {
		t.Fatalf("first create on a: %d %q %s", st1, rep1, body1)
	}
	st2, body2, rep2 := keyed(b, "POST", "/entity/JSON/idem/1", `{"n":7}`, "order-7")
	if st2 != st1 || !bytes.Equal(body2, body1) || rep2 != "true" {
		t.Fatalf("repeat on b: %d %q %s, want %d true %s", st2, rep2, body2, st1, body1)
	}
	if st, body, _ := keyed(b, "POST", "/entity/JSON/idem/1", `{"n":8}`, "order-7"); st != 422 || !bytes.Contains(body, []byte("IDEMPOTENCY_KEY_REUSED")) {
		t.Fatalf("another body under the key on b: %d %s", st, body)
	}
	if got := entityCount(t, a.base, "idem/1"); got != 1 {
		t.Fatalf("%d entities after a create and its replay, want 1", got)
	}

	ids := createdIDs(t, body1)
	if len(ids) != 1 {
		t.Fatalf("created ids %v", ids)
	}
	path := "/entity/JSON/" + ids[0]
	st3, body3, _ := keyed(b, "PUT", path, `{"n":9}`, "update-9")
	if st3 != 200 {
		t.Fatalf("keyed update on b: %d %s", st3, body3)
	}
	st4, body4, rep4 := keyed(a, "PUT", path, `{"n":9}`, "update-9")
	if st4 != 200 || !bytes.Equal(body4, body3) || rep4 != "true" {
		t.Fatalf("repeat of the update on a: %d %q %s, want a replay of %s", st4, rep4, body4, body3)
	}
}
