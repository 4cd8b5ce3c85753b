package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"svc/cluster/peer"
	"svc/compute"
	"svc/compute/member"
	"svc/storage/pgtest"
	"svc/txtoken"
)

const dispatchWorkflow = `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false,
    "processors":[{"name":"p","executionMode":"SYNC","config":{"calculationNodesTags":"far","responseTimeoutMs":20000}}]}]},
  "DONE":{}}}]}`

// TestClusterProcessesDispatchAndJoin runs three svc processes on one
// database. A compute member connected to node a serves the processor of
// a workflow started through node b (forwarded over the internal route);
// its callback, sent to node c with b's routing token, is proxied to b and
// joins b's transaction, committing with it. A call to the internal route
// that is not sealed with the cluster key is refused with 403.
func TestClusterProcessesDispatchAndJoin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a cluster of svc processes")
	}
	db := pgtest.New(t, "cluster_dispatch")
	grpcA := freePort(t)
	a := startClusterNode(t, db, "a", nil, fmt.Sprintf("SVC_GRPC_PORT=%d", grpcA), "SVC_SCHEDULER_ENABLED=false")
	b := startClusterNode(t, db, "b", []string{a.gossip}, "SVC_SCHEDULER_ENABLED=false")
	c := startClusterNode(t, db, "c", []string{a.gossip}, "SVC_SCHEDULER_ENABLED=false")
	for _, n := range []*clusterNode{a, b, c} {
		n.waitLive(t, 3)
	}
	b.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"n":1,"by":"x"}`)
	b.must(t, "PUT", "/model/order/1/lock", "")
	b.must(t, "POST", "/model/import/JSON/SAMPLE_DATA/side/1", `{"k":"v"}`)
	b.must(t, "PUT", "/model/side/1/lock", "")
	b.must(t, "POST", "/model/order/1/workflow/import", dispatchWorkflow)

	type seen struct {
		claims txtoken.Claims
		side   string
		tx     string
	}
	got := make(chan seen, 1)
	m, err := member.Connect(context.Background(), member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcA), Tags: []string{"far"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{
		Processor: func(ctx context.Context, call *member.Call) (json.RawMessage, error) {
			_, _, claims, err := txtoken.Parse(call.TxToken)
			if err != nil {
				return nil, err
			}
			code, body, err := c.try("POST", "/entity/JSON/side/1", `{"k":"from the member via c"}`, "X-Tx-Token", call.TxToken)
			ids := []string{}
			var res []struct {
				TransactionID string   `json:"transactionId"`
				EntityIDs     []string `json:"entityIds"`
			}
			if err == nil && json.Unmarshal(body, &res) == nil && len(res) == 1 {
				ids = res[0].EntityIDs
			}
			if err != nil || code != 200 || len(ids) != 1 || res[0].TransactionID != call.Request.TransactionID {
				return nil, fmt.Errorf("callback through c: %d %s %v", code, body, err)
			}
			got <- seen{claims: claims, side: ids[0], tx: res[0].TransactionID}
			return json.RawMessage(`{"n":2,"by":"member on a"}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// b learns a's tags through gossip; the dispatch waits for them up to
	// SVC_DISPATCH_WAIT_TIMEOUT.
	var res []struct {
		TransactionID string   `json:"transactionId"`
		EntityIDs     []string `json:"entityIds"`
	}
	if err := json.Unmarshal(b.must(t, "POST", "/entity/JSON/order/1", `{"n":1,"by":"client"}`), &res); err != nil || len(res) != 1 {
		t.Fatalf("create answer %v %v", res, err)
	}
	var s seen
	select {
	case s = <-got:
	default:
		t.Fatal("the member's processor did not report")
	}
	if s.claims.Node != "b" || s.tx != res[0].TransactionID {
		t.Fatalf("token names node %q, callback joined %s; want b's transaction %s", s.claims.Node, s.tx, res[0].TransactionID)
	}
	var order struct {
		Data json.RawMessage `json:"data"`
		Meta struct {
			State         string `json:"state"`
			TransactionID string `json:"transactionId"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(a.must(t, "GET", "/entity/"+res[0].EntityIDs[0], ""), &order); err != nil {
		t.Fatal(err)
	}
	if order.Meta.State != "DONE" || !strings.Contains(string(order.Data), "member on a") {
		t.Fatalf("order on a: %s %s", order.Meta.State, order.Data)
	}
	var side struct {
		Meta struct {
			TransactionID string `json:"transactionId"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(c.must(t, "GET", "/entity/"+s.side, ""), &side); err != nil {
		t.Fatal(err)
	}
	if side.Meta.TransactionID != res[0].TransactionID {
		t.Fatalf("callback entity committed in %s, want b's %s", side.Meta.TransactionID, res[0].TransactionID)
	}

	// A forged internal call: sealed with another secret.
	other, _ := hex.DecodeString(strings.Repeat("ab", 32))
	key, _ := peer.NewKey(other)
	now := time.Now().Unix()
	body := key.Seal("POST", compute.CalloutPath, now, []byte(`{"type":"EntityProcessorCalculationRequest","tenant":"x","request":{}}`))
	req, _ := http.NewRequest("POST", strings.TrimSuffix(a.base, "/api")+compute.CalloutPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", peer.ContentType)
	req.Header.Set(peer.HeaderTimestamp, strconv.FormatInt(now, 10))
	resp, err := clusterClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !bytes.Contains(rb, []byte(`"FORBIDDEN"`)) {
		t.Fatalf("forged internal call: %d %s", resp.StatusCode, rb)
	}
}
