package fast

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute"
	"svc/compute/member"
)

// BenchmarkEntityCreateProcessor is one POST over loopback HTTP of an
// entity whose automated transition runs one processor on a member over
// loopback gRPC, per execution mode, on the memory engine: what a
// processor costs a create end to end, and what COMMIT_BEFORE_DISPATCH's
// second commit adds ("none" is the same create without a callout). p50 and p99 are reported besides the mean.
func BenchmarkEntityCreateProcessor(b *testing.B) {
	for _, mode := range []string{"none", "SYNC", "ASYNC_NEW_TX", "COMMIT_BEFORE_DISPATCH"} {
		b.Run(mode, func(b *testing.B) {
			procs := `,"processors":[{"name":"p","executionMode":"` + mode + `","config":{"calculationNodesTags":"bench"}}]`
			if mode == "none" { // the same create and transition without a callout
				procs = ""
			}
			env := newBehavEnv(b, "memory", compute.Config{})
			env.lockedModel("A", "bench", 1, `{"n":1,"s":"x"}`)
			env.workflows("A", "bench", 1, `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
			  "NEW":{"transitions":[{"name":"go","next":"DONE","manual":false`+procs+`}]},"DONE":{}}}]}`)
			env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				return json.RawMessage(`{"n":2,"s":"y"}`), nil
			}}, "bench")
			doc := []byte(`{"n":1,"s":"x"}`)
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				req, _ := http.NewRequest("POST", env.base+"/entity/JSON/bench/1", bytes.NewReader(doc))
				req.Header.Set("Authorization", "Bearer A")
				resp, err := env.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("create: %d", resp.StatusCode)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
