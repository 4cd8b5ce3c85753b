package fast

import (
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"svc/bench/orderdoc"
)

// Benchmarks of the create path with the realistic order document of
// bench/orderdoc (issue 14), values varying per entity, on both engines.
// Each reports entities/s and the process's CPU per entity (user+system,
// every goroutine and the GC; PostgreSQL's own CPU is not in it).

// cpuClock is the process's user+system CPU time.
func cpuClock() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportPerEntity(b *testing.B, cpu0 time.Duration, entities int) {
	cpu := cpuClock() - cpu0
	b.ReportMetric(float64(entities)/b.Elapsed().Seconds(), "entities/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(entities), "cpu-µs/entity")
}

// orderServer is benchEntityServer with model name/1 sampled from 20
// orders, locked, at changeLevel when given.
func orderServer(b *testing.B, engine, name, changeLevel string) *Server {
	b.Helper()
	s := benchEntityServer(b, engine)
	for i := 0; i < 20; i++ {
		if st, body := benchDo(s, "POST", "/api/model/import/JSON/SAMPLE_DATA/"+name+"/1", orderdoc.Append(nil, i)); st != 200 {
			b.Fatalf("sample: %d %s", st, body)
		}
	}
	if st, body := benchDo(s, "PUT", "/api/model/"+name+"/1/lock", nil); st != 200 {
		b.Fatalf("lock: %d %s", st, body)
	}
	if changeLevel != "" {
		if st, body := benchDo(s, "POST", "/api/model/"+name+"/1/changeLevel/"+changeLevel, nil); st != 200 {
			b.Fatalf("changeLevel: %d %s", st, body)
		}
	}
	return s
}

// BenchmarkOrderCreate: one order per request, requests in parallel.
//
// The postgres/c16 case runs 8 requests per P at once (16 on this 2-core
// box), as loadgen's order-create -c 16 does: a create waits on its commit, so concurrency is what lets group
// commit share transactions (storage/postgres/groupcommit.go).
func BenchmarkOrderCreate(b *testing.B) {
	type run struct{ name, engine string }
	runs := []run{}
	for _, engine := range benchEngines {
		runs = append(runs, run{engine, engine})
	}
	runs = append(runs, run{"postgres/c16", "postgres"})
	for _, r := range runs {
		engine := r.engine
		b.Run(r.name, func(b *testing.B) {
			s := orderServer(b, engine, "orders", "")
			var next atomic.Int64
			b.ReportAllocs()
			if r.name == "postgres/c16" {
				b.SetParallelism(8)
			}
			cpu0 := cpuClock()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var ctx fasthttp.RequestCtx
				ctx.Init(&fasthttp.Request{}, nil, nil)
				buf := make([]byte, 0, 2048)
				for pb.Next() {
					buf = orderdoc.Append(buf[:0], int(next.Add(1)))
					ctx.Request.Reset()
					ctx.Response.Reset()
					ctx.Request.Header.SetMethod("POST")
					ctx.Request.SetRequestURI("/api/entity/JSON/orders/1")
					ctx.Request.SetBody(buf)
					s.Handler()(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
					}
				}
			})
			b.StopTimer()
			reportPerEntity(b, cpu0, b.N)
		})
	}
}

// BenchmarkOrderCollection: n orders per request in one transaction
// (window n); an op is one request.
func BenchmarkOrderCollection(b *testing.B) {
	for _, c := range []struct {
		name, model, level string
		n                  int
		doc                func([]byte, int) []byte
	}{
		{"1000", "orders", "", 1000, orderdoc.Append},
		{"varied-100", "varied", "STRUCTURAL", 100, orderdoc.AppendVaried},
	} {
		for _, engine := range benchEngines {
			b.Run(c.name+"/"+engine, func(b *testing.B) {
				s := orderServer(b, engine, c.model, c.level)
				uri := "/api/entity/JSON/" + c.model + "/1?transactionWindow=" + strconv.Itoa(c.n)
				body := make([]byte, 0, c.n*1100)
				b.ReportAllocs()
				cpu0 := cpuClock()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					body = orderArray(body[:0], i*c.n, c.n, c.doc)
					b.StartTimer()
					if st, out := benchDo(s, "POST", uri, body); st != 200 {
						b.Fatalf("%d %s", st, out)
					}
				}
				b.StopTimer()
				reportPerEntity(b, cpu0, b.N*c.n)
			})
		}
	}
}

func orderArray(b []byte, first, n int, doc func([]byte, int) []byte) []byte {
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = doc(b, first+i)
	}
	return append(b, ']')
}
