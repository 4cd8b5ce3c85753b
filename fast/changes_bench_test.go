//go:build unix

package fast

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"svc/bench/orderdoc"
	"svc/entity"
	"svc/storage"
)

// The change feed's cost and latency at the HTTP door (issue 28 item 6).
// CPU is the process's (user + system, getrusage): everything the server,
// the hub and the in-process clients spend, not wall time, so it is less
// sensitive to other load on the machine than ns/op.

// cpuNow is the process's CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const feedBenchSub = `{"filter":{"modelName":"order","modelVersion":1}}`

// feedBenchEnv is a feed environment with the locked model order/1 of
// tenant t1 and subs durable subscriptions on it.
func feedBenchEnv(b *testing.B, engine string, record bool, subs int) *feedEnv {
	return feedBenchEnvFor(b, engine, record, subs, `{"total": 1, "customer": "c"}`)
}

// feedBenchEnvFor is feedBenchEnv with the model locked on sample.
func feedBenchEnvFor(b *testing.B, engine string, record bool, subs int, sample string) *feedEnv {
	b.Helper()
	e := newFeedEnvRecording(b, engine, record, true)
	e.lockedModel("t1", "order", 1, sample)
	for range subs {
		if r := e.call("t1", "POST", "/subscriptions", []byte(feedBenchSub)); r.status != 201 {
			b.Fatalf("subscribe: %d %s", r.status, r.body)
		}
	}
	return e
}

// createOnce posts one entity through the server's handler, in process
// (no client or socket cost: what is measured is the server's).
func (e *feedEnv) createOnce(b *testing.B, h fasthttp.RequestHandler, doc []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, nil, nil)
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/api/entity/JSON/order/1")
	ctx.Request.Header.Set("Authorization", "Bearer t1")
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.SetBody(doc)
	h(&ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("create: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

// BenchmarkChangeFeedCreate: one single-entity create through the whole
// handler chain (auth, entity service, workflow, engine), with the change
// feed off (the entity service writes to the engine, no Recorder), with
// the Recorder and no subscription, and with 10 durable subscriptions on
// the model (no consumer attached: the create's own cost, one event in
// the commit and a wake of the hub). cpu-µs/op is the process's CPU per
// create. The "interleaved" sub-benchmark runs the three side by side in
// rounds of 64 creates each, so load drift hits them alike, and reports
// each one's CPU per create and the ratios (x10/x0: 10 subscriptions
// over none; x0/off: none over the feed off).
func BenchmarkChangeFeedCreate(b *testing.B) {
	doc := []byte(`{"total": 12, "customer": "c-1"}`)
	type variant struct {
		name   string
		record bool
		subs   int
	}
	variants := []variant{{"feed=off", false, 0}, {"subscriptions=0", true, 0}, {"subscriptions=10", true, 10}}
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		for _, v := range variants {
			b.Run(engine+"/"+v.name, func(b *testing.B) {
				e := feedBenchEnv(b, engine, v.record, v.subs)
				h := e.srv.Handler()
				e.createOnce(b, h, doc) // warm the model cache and pools
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuNow()
				for range b.N {
					e.createOnce(b, h, doc)
				}
				cpu = cpuNow() - cpu
				b.StopTimer()
				b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			})
		}
		b.Run(engine+"/interleaved", func(b *testing.B) { interleavedFeedCreate(b, engine, doc, doc) })
		// The same with the ~1 KB order document svc's load scenarios use
		// (bench/orderdoc): the event's fixed cost against a create of the
		// size users send.
		b.Run(engine+"/interleaved-order", func(b *testing.B) {
			order := orderdoc.Append(nil, 1)
			interleavedFeedCreate(b, engine, order, order)
		})
	}
}

// interleavedFeedCreate runs the three variants of BenchmarkChangeFeedCreate
// side by side in rounds of 64 creates of doc each.
func interleavedFeedCreate(b *testing.B, engine string, sample, doc []byte) {
	variants := []struct {
		record bool
		subs   int
	}{{false, 0}, {true, 0}, {true, 10}} // feed off, no subscription, 10
	envs := make([]*feedEnv, len(variants))
	hs := make([]fasthttp.RequestHandler, len(variants))
	for i, v := range variants {
		envs[i] = feedBenchEnvFor(b, engine, v.record, v.subs, string(sample))
		hs[i] = envs[i].srv.Handler()
		envs[i].createOnce(b, hs[i], doc)
	}
	const round = 64
	cpu := make([]time.Duration, len(variants))
	ops := make([]int, len(variants))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		for i := range variants {
			n := min(round, b.N-done)
			if n <= 0 {
				break
			}
			c := cpuNow()
			for range n {
				envs[i].createOnce(b, hs[i], doc)
			}
			cpu[i] += cpuNow() - c
			ops[i] += n
			done += n
		}
	}
	b.StopTimer()
	per := make([]float64, len(variants))
	for i := range variants {
		per[i] = float64(cpu[i].Nanoseconds()) / 1e3 / float64(max(ops[i], 1))
	}
	b.ReportMetric(per[0], "off-cpu-µs/op")
	b.ReportMetric(per[1], "x0-cpu-µs/op")
	b.ReportMetric(per[2], "x10-cpu-µs/op")
	b.ReportMetric(per[1]/per[0], "x0/off")
	b.ReportMetric(per[2]/per[1], "x10/x0")
}

// sseLatency reads one text/event-stream over loopback and records, for
// each change event, the time from its emittedAt (the commit) to the
// moment its data line was read.
type sseLatency struct {
	resp   *http.Response
	cancel context.CancelFunc
	mu     sync.Mutex
	lat    []time.Duration
	want   int
	done   chan struct{}
	cut    atomic.Pointer[string]
	closed sync.Once
}

var emittedAtKey = []byte(`"emittedAt":"`)

// openLatency attaches a stream at path and waits for its first comment
// (the server attached it); it stops counting after want events.
func (e *feedEnv) openLatency(b *testing.B, path string, want int) *sseLatency {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.base+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t1")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: e.client.Transport}).Do(req)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		b.Fatalf("stream %s: %d", path, resp.StatusCode)
	}
	s := &sseLatency{resp: resp, cancel: cancel, want: want, lat: make([]time.Duration, 0, want), done: make(chan struct{})}
	attached := make(chan struct{})
	go func() {
		defer s.finish()
		r := bufio.NewReaderSize(resp.Body, 64<<10)
		first := true
		cutNext := false
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			switch {
			case first && line[0] == ':':
				first = false
				close(attached)
			case bytes.HasPrefix(line, []byte("event: cut")):
				cutNext = true
			case bytes.HasPrefix(line, []byte("data: ")):
				if cutNext {
					c := string(bytes.TrimSpace(line[6:]))
					s.cut.Store(&c)
					return
				}
				i := bytes.Index(line, emittedAtKey)
				if i < 0 {
					continue
				}
				rest := line[i+len(emittedAtKey):]
				j := bytes.IndexByte(rest, '"')
				at, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
				if err != nil {
					continue
				}
				d := time.Since(at)
				s.mu.Lock()
				s.lat = append(s.lat, d)
				n := len(s.lat)
				s.mu.Unlock()
				if n == s.want {
					return
				}
			}
		}
	}()
	select {
	case <-attached:
	case <-time.After(60 * time.Second):
		b.Fatal("stream never started")
	}
	b.Cleanup(s.close)
	return s
}

func (s *sseLatency) finish() { s.closed.Do(func() { close(s.done) }) }

func (s *sseLatency) close() {
	s.cancel()
	s.resp.Body.Close()
}

// wait waits for the stream's events (bounded: a broken run fails, it
// does not hang) and returns them.
func (s *sseLatency) wait(b *testing.B) []time.Duration {
	b.Helper()
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cut.Load(); c != nil {
		b.Fatalf("stream cut after %d of %d events: %s", len(s.lat), s.want, *c)
	}
	if len(s.lat) < s.want {
		b.Fatalf("received %d of %d", len(s.lat), s.want)
	}
	return s.lat
}

// pacedCreates has eight writers create n entities through the entity
// service at a total of rate per second (tickers pace them; the rate
// reached is returned). With batch > 1 each request is a collection
// create of batch entities in one transaction (one commit, batch events),
// so fewer requests make the same event rate.
func (e *feedEnv) pacedCreates(b *testing.B, n, rate, batch int) (reached float64) {
	const writers = 8
	batch = max(batch, 1)
	per := time.Second * time.Duration(writers*batch) / time.Duration(rate)
	key := storage.ModelKey{Name: "order", Version: 1}
	actor := entity.Actor{Tenant: "t1", User: "writer", Kind: "service"}
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for w := range writers {
		count := n / writers
		if w < n%writers {
			count++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(per)
			defer t.Stop()
			var doc []byte
			for i := 0; i < count; i += batch {
				<-t.C
				k := min(batch, count-i)
				doc = doc[:0]
				if k > 1 {
					doc = append(doc, '[')
				}
				for j := range k {
					if j > 0 {
						doc = append(doc, ',')
					}
					doc = fmt.Appendf(doc, `{"total":%d,"customer":"c"}`, i+j)
				}
				if k > 1 {
					doc = append(doc, ']')
				}
				if _, err := e.svc.Create(context.Background(), actor, key, "JSON", doc, k); err != nil {
					failed.Store(&err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return float64(n) / time.Since(start).Seconds()
}

func reportFeedLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// feedRates are the latency benchmarks' event rates: 1,000 and 10,000
// events/s from single creates, and 10,000/s from collection creates of
// 10 entities (one commit, ten events), which eight writers on two
// shared cores reach where single creates do not
// (BenchmarkChangeFeedWriters).
var feedRates = []struct{ rate, batch int }{{1000, 1}, {10000, 1}, {10000, 10}}

// BenchmarkChangeFeedWriters: the latency benchmarks' writers alone, with
// one durable subscription on the model (every create records its event)
// and no consumer: the event rate they reach and the process's CPU per
// event. It tells whether a rate the latency benchmarks miss is the
// producer's limit or the feed's.
func BenchmarkChangeFeedWriters(b *testing.B) {
	for _, r := range feedRates {
		b.Run(fmt.Sprintf("rate=%d/batch=%d", r.rate, r.batch), func(b *testing.B) {
			e := feedBenchEnv(b, "memory", true, 1)
			b.ResetTimer()
			cpu := cpuNow()
			reached := e.pacedCreates(b, b.N, r.rate, r.batch)
			cpu = cpuNow() - cpu
			b.StopTimer()
			b.ReportMetric(reached, "events/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/event")
		})
	}
}

// BenchmarkChangeFeedSSELatency: eight writers create entities at a
// steady total rate (feedRates, paced by tickers; the rate reached is
// reported) and one SSE client over loopback measures the time from each
// commit's emittedAt to the arrival of its data line: p50 and p99 in ms.
// door=durable reads /subscriptions/{id}/events, door=live /changes.
// Memory engine, as BenchmarkCommitToSubscriber of compute/changes for
// the gRPC door.
func BenchmarkChangeFeedSSELatency(b *testing.B) {
	for _, door := range []string{"durable", "live"} {
		for _, r := range feedRates {
			rate := r.rate
			b.Run(fmt.Sprintf("door=%s/rate=%d/batch=%d", door, rate, r.batch), func(b *testing.B) {
				e := feedBenchEnv(b, "memory", true, 0)
				path := "/changes?modelName=order&modelVersion=1"
				if door == "durable" {
					var sub struct {
						ID string `json:"id"`
					}
					r := e.call("t1", "POST", "/subscriptions", []byte(feedBenchSub))
					if r.status != 201 {
						b.Fatalf("subscribe: %d %s", r.status, r.body)
					}
					r.decode(b, &sub)
					path = "/subscriptions/" + sub.ID + "/events"
				}
				s := e.openLatency(b, path, b.N)
				b.ResetTimer()
				cpu := cpuNow()
				reached := e.pacedCreates(b, b.N, rate, r.batch)
				lat := s.wait(b)
				cpu = cpuNow() - cpu
				b.StopTimer()
				b.ReportMetric(reached, "events/s")
				b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/event")
				reportFeedLatency(b, lat)
			})
		}
	}
}

// BenchmarkChangeFeedFanOut: 100 live SSE subscribers (/changes, one
// connection each, over loopback) on one model; eight writers create
// b.N entities paced to 1,000 events/s in total (100,000 deliveries/s).
// Reported: the rate reached, the time from the last commit until all 100
// had every event (drain-ms), p50/p99 of the commit-to-subscriber latency
// over all deliveries, and the process's CPU per create with its 100
// deliveries (cpu-µs/event) and per delivery.
func BenchmarkChangeFeedFanOut(b *testing.B) {
	const subscribers = 100
	const rate = 1000
	b.Run(fmt.Sprintf("subscribers=%d/rate=%d", subscribers, rate), func(b *testing.B) {
		e := feedBenchEnv(b, "memory", true, 0)
		// One connection per stream.
		e.client.Transport.(*http.Transport).MaxIdleConnsPerHost = subscribers + 16
		streams := make([]*sseLatency, subscribers)
		for i := range streams {
			streams[i] = e.openLatency(b, "/changes?modelName=order&modelVersion=1", b.N)
		}
		b.ResetTimer()
		cpu := cpuNow()
		reached := e.pacedCreates(b, b.N, rate, 1)
		committed := time.Now()
		var all []time.Duration
		for _, s := range streams {
			all = append(all, s.wait(b)...)
		}
		drain := time.Since(committed)
		cpu = cpuNow() - cpu
		b.StopTimer()
		b.ReportMetric(reached, "events/s")
		b.ReportMetric(float64(drain.Microseconds())/1000, "drain-ms")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/event")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*subscribers), "cpu-µs/delivery")
		reportFeedLatency(b, all)
	})
}
