package search

import (
	"context"
	"testing"
	"time"

	"github.com/buger/jsonparser"

	"svc/compute/member"
	"svc/iam"
	"svc/storage"
)

// benchMember serves tenant bench on a loopback compute server: criteria
// "even" matches when $.u is even. It wires the server into services.
func benchMember(b *testing.B, services ...*Service) {
	b.Helper()
	startMember(b, "bench", func(_ context.Context, c *member.Call) (bool, string, error) {
		u, err := jsonparser.GetInt(c.Request.Payload.Data, "u")
		return u%2 == 0, "", err
	}, services...)
}

// BenchmarkDirectSearchFunction: 100k entities; a simple leaf narrows to
// 1 ("selective") or 1000 ("group") candidates and a function condition
// decides each on a real member over loopback gRPC (one round trip per
// candidate). calls/s is the member round-trip rate of one search.
func BenchmarkDirectSearchFunction(b *testing.B) {
	mem, pg := benchServices(b)
	benchMember(b, mem, pg)
	fn := `{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"calc"}}}`
	sel := `{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.u","operatorType":"EQUALS","value":4242},` + fn + `]}`
	grp := `{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.g","operatorType":"EQUALS","value":42},` + fn + `]}`
	// The principal the HTTP layer would put on the request's context.
	ctx := context.WithValue(context.Background(), iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u", TenantID: "bench"})
	run := func(s *Service, cond string, candidates, want int) func(b *testing.B) {
		return func(b *testing.B) {
			req := &DirectRequest{Tenant: "bench", Model: storage.ModelKey{Name: "b", Version: 1}, Condition: []byte(cond), Limit: []byte("10000")}
			es, err := s.Direct(ctx, req)
			if err != nil || len(es) != want {
				b.Fatalf("got %d rows, err %v; want %d", len(es), err, want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := s.Direct(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(candidates)*float64(b.N)/time.Since(start).Seconds(), "calls/s")
		}
	}
	// u = 4242 is even; g = 42 holds u = 42, 142, …: all even.
	b.Run("memory/selective", run(mem, sel, 1, 1))
	b.Run("memory/group", run(mem, grp, 1000, 1000))
	b.Run("postgres/selective", run(pg, sel, 1, 1))
	b.Run("postgres/group", run(pg, grp, 1000, 1000))
}
