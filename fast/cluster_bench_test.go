package fast

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute/member"
	"svc/internal/await"
	"svc/workflow"
)

// reportLatency adds p50 and p99 of the per-operation times to the
// benchmark's output, in microseconds.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkClusterDispatch: one processor dispatch to a member that
// answers at once, from the node it is connected to (local) and from
// another node, which forwards it over the sealed internal route
// (forwarded). The difference is the forward's overhead: sealing, one
// loopback HTTP round trip, opening, and the JSON of the callout.
func BenchmarkClusterDispatch(b *testing.B) {
	env := newClusterEnv(b, 5*time.Second, "A", "B")
	a, bn := env.nodes["A"], env.nodes["B"]
	m, err := member.Connect(context.Background(), member.Config{Endpoint: a.grpcAddr, Token: "m2m-T", Tags: []string{"far"}},
		member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"n":2}`), nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	await.Until(b, await.Long, func() bool { n, _ := env.mesh.View("B").Lookup("A"); return len(n.Tags["T"]) > 0 }, "A's tags reach the mesh")
	call := func() *workflow.ProcessorCall {
		return &workflow.ProcessorCall{Processor: "p", ExecutionMode: "SYNC", Call: workflow.Call{
			Tenant: "T", Auth: workflow.Auth{Kind: "user", ID: "u-T"}, TransactionID: "00000000-0000-0000-0000-000000000002",
			Meta: workflow.Meta{ID: "00000000-0000-0000-0000-000000000001", ModelName: "order", ModelVersion: 1, State: "NEW"},
			Data: []byte(`{"n":1,"note":"a small order document"}`), Workflow: "w", Transition: "go", StateFrom: "NEW", StateTo: "DONE",
			Tags: []string{"far"}, TagsCSV: "far", Timeout: 5 * time.Second}}
	}
	for _, c := range []struct {
		name string
		from *clusterNode
	}{{"local", a}, {"forwarded", bn}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				res, err := c.from.compute.DispatchProcessor(context.Background(), call())
				if err != nil || !res.Success {
					b.Fatalf("%+v %v", res, err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkClusterJoinedCallback: a compute member's callback read
// (GET /entity/{id} with X-Tx-Token) inside an open transaction of node
// B, sent to B itself (local) and to node C, which proxies it to B
// (proxied). The transaction stays open for the whole benchmark: its
// processor waits until the callbacks are done.
func BenchmarkClusterJoinedCallback(b *testing.B) {
	env := newClusterEnv(b, 5*time.Second, "B", "C")
	bn, cn := env.nodes["B"], env.nodes["C"]
	bn.lockedModel("T", "order", 1, `{"n":1}`)
	bn.call("T", "POST", "/model/order/1/workflow/import", []byte(`{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false,
    "processors":[{"name":"p","executionMode":"SYNC","config":{"calculationNodesTags":"hold","responseTimeoutMs":600000}}]}]},
  "DONE":{}}}]}`)).ok(b)
	bn.lockedModel("T", "side", 1, `{"k":"v"}`)
	side, _ := bn.create("T", "side", 1, `{"k":"read by the callbacks"}`)
	toks := make(chan string, 1)
	release := make(chan struct{})
	m, err := member.Connect(context.Background(), member.Config{Endpoint: bn.grpcAddr, Token: "m2m-T", Tags: []string{"hold"}},
		member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			toks <- c.TxToken
			<-release
			return nil, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	done := make(chan entityResp, 1)
	go func() { done <- bn.call("T", "POST", "/entity/JSON/order/1", []byte(`{"n":1}`)) }()
	tok := <-toks
	defer func() {
		close(release)
		<-done
	}()
	for _, c := range []struct {
		name string
		to   *clusterNode
	}{{"local", bn}, {"proxied", cn}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				req, _ := http.NewRequest("GET", c.to.base+"/entity/"+side, nil)
				req.Header.Set("Authorization", "Bearer T")
				req.Header.Set("X-Tx-Token", tok)
				resp, err := c.to.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}
