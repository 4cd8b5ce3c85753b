package compute

import (
	"context"
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute/member"
	"svc/workflow"
)

// BenchmarkProcessorRoundTrip is one SYNC processor call to a member over
// loopback gRPC: encode, route, member decode, handler, response, match.
// p50 and p99 latencies are reported besides the mean.
func BenchmarkProcessorRoundTrip(b *testing.B) {
	s, addr := startServer(b, Config{})
	connect(b, addr, "m2m-t1", member.Handlers{
		Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
			return c.Request.Payload.Data, nil
		},
	}, "calc")
	call := &workflow.ProcessorCall{Processor: "enrich", Call: workflow.Call{
		Tenant: "t1", Auth: workflow.Auth{Kind: "user", ID: "u1", Roles: []string{"ROLE_USER"}},
		TxToken: "tok", TransactionID: "tx", Meta: workflow.Meta{ID: "e1", ModelName: "m", ModelVersion: 1, State: "A"},
		Data: []byte(`{"id":1,"name":"widget","tags":["a","b"],"price":12.5}`), Workflow: "wf", Transition: "go",
		StateFrom: "A", StateTo: "B", Tags: []string{"calc"}, TagsCSV: "calc", Timeout: 10 * time.Second,
	}}
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		res, err := s.DispatchProcessor(ctx, call)
		if err != nil || !res.Success {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
