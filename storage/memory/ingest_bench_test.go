package memory

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

// Issue 25: ingesting a collection into a store that already holds many
// single-created entities cost 1.3–2.3× the CPU per entity of a fresh
// store. The cause is the collector: every cycle marks what the store
// holds, so the more it holds, the more each cycle costs, and the GC tuner
// (TuneGC) runs cycles more often as documents grow. These benchmarks
// measure it inside one run, so the ratio holds on a loaded machine.

// procCPU is the process's user+system CPU time: it counts the
// collector's background workers, which the benchmark's wall clock
// leaves out on an idle core and charges twice on a busy one.
func procCPU() time.Duration {
	u, s := procCPUSplit()
	return u + s
}

// procCPUSplit is the process's user and system CPU time.
func procCPUSplit() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

var gcSamples = []metrics.Sample{
	{Name: "/gc/scan/heap:bytes"},
	{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
	{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"},
	{Name: "/gc/cycles/total:gc-cycles"},
	{Name: "/gc/heap/objects:objects"},
}

type gcStat struct {
	scanHeap uint64
	gcCPU    float64
	cycles   uint64
	objects  uint64
}

func readGC() gcStat {
	metrics.Read(gcSamples)
	var g gcStat
	if v := gcSamples[0].Value; v.Kind() == metrics.KindUint64 {
		g.scanHeap = v.Uint64()
	}
	// Assist and dedicated mark workers: the idle workers' share is
	// counted as wall time, which a loaded machine inflates.
	for _, x := range gcSamples[1:3] {
		if x.Value.Kind() == metrics.KindFloat64 {
			g.gcCPU += x.Value.Float64()
		}
	}
	if v := gcSamples[3].Value; v.Kind() == metrics.KindUint64 {
		g.cycles = v.Uint64()
	}
	if v := gcSamples[4].Value; v.Kind() == metrics.KindUint64 {
		g.objects = v.Uint64()
	}
	return g
}

// requestGarbage is what a request allocates per entity besides its
// document and write, short-lived (the handler's 3.6 KB per entity of a
// 1,000-order collection, BENCHMARKS.md): it sets how often the
// collector runs.
const requestGarbage = 2560

var garbageSink [][]byte

// ingestCollections commits n collections of 1000 ~1 KB creates into s;
// each write gets its own copy of the document, as a request body would,
// and requestGarbage more bytes the request drops.
func ingestCollections(b *testing.B, s *Entities, n int) {
	m := storage.ModelKey{Name: "bench", Version: 1}
	for c := 0; c < n; c++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewV7()), User: "u", Writes: make([]storage.Write, 1000)}
		garbage := make([][]byte, len(tx.Writes))
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewV7()), Model: m, State: "CREATED",
				Data: append([]byte(nil), benchDoc...), Transition: "loopback"}
			garbage[j] = make([]byte, requestGarbage)
		}
		garbageSink = garbage
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
}

// preloadSingles fills s with n single-entity creates, one transaction
// each, as n `POST /entity` requests leave it.
func preloadSingles(b *testing.B, s *Entities, n int) {
	m := storage.ModelKey{Name: "held", Version: 1}
	doc := make([]byte, len(benchDoc))
	for i := 0; i < n; i++ {
		copy(doc, benchDoc)
		id := uuid.Must(uuid.NewV7())
		tx := &storage.Tx{Tenant: "t", ID: id, User: "u", Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: doc, Transition: "loopback"}}}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
}

// ingestRun is the CPU and collector work of ingesting collections into
// s, the GC tuner running as cmd/svc runs it (faster, so a short run
// sees it).
type ingestRun struct {
	cpu, sys time.Duration
	gcCPU    float64
	cycles   uint64
	entities int
}

func measureIngest(b *testing.B, s *Entities, collections int) ingestRun {
	stop := s.TuneGC(100, 10*time.Millisecond)
	defer stop()
	// Both runs start with the pages the process no longer uses given
	// back, so each faults in what it grows by (a run after a larger
	// one would otherwise reuse its pages).
	debug.FreeOSMemory()
	g0 := readGC()
	u0, s0 := procCPUSplit()
	ingestCollections(b, s, collections)
	u1, s1 := procCPUSplit()
	g1 := readGC()
	return ingestRun{cpu: u1 + s1 - u0 - s0, sys: s1 - s0, gcCPU: g1.gcCPU - g0.gcCPU, cycles: g1.cycles - g0.cycles, entities: collections * 1000}
}

// BenchmarkIngestHeldRatio ingests 100 collections of 1 000 entities into
// a fresh store, then into a store holding 300 000 single-created
// entities, and reports the CPU per entity of each (process CPU, the
// collector's workers included) and their ratio, with the scannable heap
// the held store leaves and the collector's share. One op is one pair.
func BenchmarkIngestHeldRatio(b *testing.B) {
	const collections, held = 100, 300_000
	var fresh, full ingestRun
	var scan, objects uint64
	for i := 0; i < b.N; i++ {
		s := NewEntities()
		r := measureIngest(b, s, collections)
		fresh.cpu += r.cpu
		fresh.sys += r.sys
		fresh.gcCPU += r.gcCPU
		fresh.cycles += r.cycles
		fresh.entities += r.entities
		runtime.KeepAlive(s)
		s = nil
		runtime.GC()

		s = NewEntities()
		g0 := readGC()
		preloadSingles(b, s, held)
		runtime.GC()
		g1 := readGC()
		scan += g1.scanHeap - min(g0.scanHeap, g1.scanHeap)
		objects += g1.objects - min(g0.objects, g1.objects)
		r = measureIngest(b, s, collections)
		full.cpu += r.cpu
		full.sys += r.sys
		full.gcCPU += r.gcCPU
		full.cycles += r.cycles
		full.entities += r.entities
		runtime.KeepAlive(s)
		s = nil
		runtime.GC()
	}
	per := func(r ingestRun) float64 { return float64(r.cpu.Nanoseconds()) / float64(r.entities) / 1e3 }
	b.ReportMetric(per(fresh), "fresh-cpu-µs/entity")
	b.ReportMetric(per(full), "held-cpu-µs/entity")
	b.ReportMetric(per(full)/per(fresh), "held/fresh")
	b.ReportMetric(float64(fresh.sys.Nanoseconds())/float64(fresh.entities)/1e3, "fresh-sys-µs/entity")
	b.ReportMetric(float64(full.sys.Nanoseconds())/float64(full.entities)/1e3, "held-sys-µs/entity")
	b.ReportMetric(float64(fresh.cycles)/float64(b.N), "fresh-gc-cycles")
	b.ReportMetric(fresh.gcCPU*1e6/float64(fresh.entities), "fresh-mark-µs/entity")
	b.ReportMetric(full.gcCPU*1e6/float64(full.entities), "held-mark-µs/entity")
	b.ReportMetric(float64(full.cycles)/float64(b.N), "held-gc-cycles")
	b.ReportMetric(float64(scan)/float64(b.N)/held, "scan-B/held-entity")
	b.ReportMetric(float64(objects)/float64(b.N)/held, "objects/held-entity")
}

// BenchmarkCommitOneHeld is a single-entity create (the store's share of
// `POST /entity`) into a store holding 300 000 single-created entities,
// the GC tuner running; cpu-ns/op counts the collector's workers too.
func BenchmarkCommitOneHeld(b *testing.B) {
	s := NewEntities()
	preloadSingles(b, s, 300_000)
	stop := s.TuneGC(100, 10*time.Millisecond)
	defer stop()
	m := storage.ModelKey{Name: "held", Version: 1}
	doc := append([]byte(nil), benchDoc...)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := procCPU()
	for i := 0; i < b.N; i++ {
		id := uuid.Must(uuid.NewV7())
		tx := &storage.Tx{Tenant: "t", ID: id, User: "u", Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: doc, Transition: "loopback"}}}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((procCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkGetHeld reads one entity of a store holding 300 000
// single-created entities (compare BenchmarkCommitOneHeld).
func BenchmarkGetHeld(b *testing.B) {
	s := NewEntities()
	preloadSingles(b, s, 300_000)
	id := uuid.Must(uuid.NewV7())
	m := storage.ModelKey{Name: "held", Version: 1}
	if _, err := s.Commit(context.Background(), &storage.Tx{Tenant: "t", ID: id, User: "u", Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: benchDoc}}}); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := procCPU()
	for i := 0; i < b.N; i++ {
		if _, err := s.Get(context.Background(), "t", id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((procCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
