package infer

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/bench/orderdoc"
)

// cpuTime is the process's user+system CPU time. The box is shared by
// several jobs, so wall-clock MB/s mostly measures the scheduler; the
// benchmarks also report throughput per CPU-second of this process
// ("cpu-MB/s"), which is what "per core" means.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type cpuMeter struct{ start time.Duration }

func startCPU(b *testing.B) cpuMeter {
	b.ResetTimer()
	return cpuMeter{cpuTime()}
}

func (c cpuMeter) report(b *testing.B, bytesPerOp int) {
	b.StopTimer()
	used := (cpuTime() - c.start).Seconds()
	if used > 0 && bytesPerOp > 0 {
		b.ReportMetric(float64(bytesPerOp)*float64(b.N)/used/1e6, "cpu-MB/s")
	}
	if used > 0 {
		b.ReportMetric(used*1e9/float64(b.N), "cpu-ns/op")
	}
}

// Corpora are generated deterministically so figures compare across runs.

var benchWords = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}

func smallFlatDocs(n int) [][]byte {
	r := rand.New(rand.NewSource(1))
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, `{"id":%d,"name":%q,"active":%t,"score":%d.%d,"created":"2024-0%d-1%dT10:15:30Z","tag":%q}`,
			r.Intn(1_000_000), benchWords[r.Intn(len(benchWords))], r.Intn(2) == 0,
			r.Intn(100), r.Intn(100), 1+r.Intn(9), r.Intn(10), benchWords[r.Intn(len(benchWords))])
	}
	return docs
}

// nestedDoc builds a ~1 KB document: inlined objects, an array of objects,
// a primitive array, an array of arrays, temporal strings.
func nestedDoc(r *rand.Rand) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"orderId":"ord-%d","customer":{"id":%d,"name":%q,"email":"%s@example.com","address":{"street":"%d Market Street","city":%q,"zip":"%05d","country":"GB"}},`,
		r.Intn(1e9), r.Intn(1e6), benchWords[r.Intn(8)], benchWords[r.Intn(8)], r.Intn(999), benchWords[r.Intn(8)], r.Intn(99999))
	b.WriteString(`"lines":[`)
	for i := 0; i < 3; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%d","qty":%d,"price":%d.%02d,"discount":null,"gift":%t}`, r.Intn(1e5), 1+r.Intn(9), r.Intn(500), r.Intn(100), r.Intn(2) == 0)
	}
	fmt.Fprintf(&b, `],"scores":[%d,%d,%d,%d],"matrix":[[%d,%d],[%d,%d]],"placed":"2024-06-%02dT10:15:30+01:00","ship":"2024-06-%02d","notes":"%s %s %s","flags":{"priority":%t,"fragile":%t},"total":%d.%02d}`,
		r.Intn(100), r.Intn(100), r.Intn(100), r.Intn(100), r.Intn(1000), r.Intn(1000), r.Intn(1000), r.Intn(1000),
		1+r.Intn(28), 1+r.Intn(28), benchWords[r.Intn(8)], benchWords[r.Intn(8)], strings.Repeat("lorem ipsum ", 8+r.Intn(4)),
		r.Intn(2) == 0, r.Intn(2) == 0, r.Intn(5000), r.Intn(100))
	return []byte(b.String())
}

func nestedDocs(n int) [][]byte {
	r := rand.New(rand.NewSource(2))
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = nestedDoc(r)
	}
	return docs
}

// arrayHeavyDoc builds one ~1 MB document of long numeric arrays, arrays of
// arrays and an array of small objects.
func arrayHeavyDoc() []byte {
	r := rand.New(rand.NewSource(3))
	var b strings.Builder
	b.WriteString(`{"series":[`)
	for i := 0; i < 400; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j := 0; j < 200; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(r.Intn(100000)))
		}
		b.WriteByte(']')
	}
	b.WriteString(`],"points":[`)
	for i := 0; b.Len() < 1<<20-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"x":%d.%d,"y":%d,"label":%q}`, r.Intn(1000), r.Intn(1000), r.Intn(1000), benchWords[r.Intn(8)])
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func benchIngest(b *testing.B, docs [][]byte) {
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	m := NewModel()
	for _, d := range docs { // the model has seen the shape
		if err := m.Ingest(d, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		for _, d := range docs {
			if err := m.Ingest(d, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu.report(b, total)
}

// Each op ingests a batch of 1000 documents; allocs/op is per batch.
func BenchmarkIngestSmallFlat(b *testing.B) { benchIngest(b, smallFlatDocs(1000)) }
func BenchmarkIngestNested1KB(b *testing.B) { benchIngest(b, nestedDocs(1000)) }
func BenchmarkIngestArrayHeavy1MB(b *testing.B) {
	benchIngest(b, [][]byte{arrayHeavyDoc()})
}

func BenchmarkIngestNested1KBColdModel(b *testing.B) {
	docs := nestedDocs(100)
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m := NewModel()
		for _, d := range docs {
			if err := m.Ingest(d, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// model500 has 500 data fields: 300 scalars at the root (some inlined), 100
// in an array-of-objects node, 100 primitive arrays.
func model500(b testing.TB) *Model {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := 0; i < 300; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		if i%3 == 0 {
			fmt.Fprintf(&sb, `"group%d":{"value%d":%d}`, i, i, i)
		} else {
			fmt.Fprintf(&sb, `"field%d":"v%d"`, i, i)
		}
	}
	sb.WriteString(`,"items":[{`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"attr%d":%d.5`, i, i)
	}
	sb.WriteString(`}]`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&sb, `,"list%d":[1,"x",%d]`, i, i)
	}
	sb.WriteByte('}')
	m := NewModel()
	if err := m.Ingest([]byte(sb.String()), Limits{}); err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkExportSimpleView500Fields(b *testing.B) {
	m := model500(b)
	buf := m.AppendSimpleView(nil)
	if n := strings.Count(string(buf), `":"`) + strings.Count(string(buf), `":[`); n < 500 {
		b.Fatalf("model has %d entries", n)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		buf = m.AppendSimpleView(buf[:0])
	}
	cpu.report(b, len(buf))
}

func BenchmarkParseSimpleView500Fields(b *testing.B) {
	out := model500(b).AppendSimpleViewExport(nil, true)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseSimpleView(out, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckNested1KB(b *testing.B) {
	docs := nestedDocs(100)
	m := NewModel()
	total := 0
	for _, d := range docs {
		total += len(d)
		if err := m.Ingest(d, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, d := range docs {
			if _, err := m.Check(d, ChangeNone, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCheckVariedBatch100 is model.Admit's loop over one request of
// the order-varied load (100 documents at change level STRUCTURAL): the
// model has seen orders 0..4999 (ext groups g0..g4) and the batch, orders
// 5000..5099, opens group g5, so about 60 of its documents widen the model
// (a new field, or a new type for one). An op is the whole batch.
func BenchmarkCheckVariedBatch100(b *testing.B) {
	base := NewModel()
	var buf []byte
	for i := 0; i < 5000; i++ {
		buf = orderdoc.AppendVaried(buf[:0], i)
		if err := base.Ingest(buf, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	docs := make([][]byte, 100)
	for i := range docs {
		docs[i] = orderdoc.AppendVaried(nil, 5000+i)
	}
	widened := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur := base
		widened = 0
		for _, d := range docs {
			w, err := cur.Check(d, ChangeStructural, Limits{})
			if err != nil {
				b.Fatal(err)
			}
			if w != nil {
				cur, widened = w, widened+1
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(widened), "widened/batch")
}

// BenchmarkBatchVariedBatch100 is the same batch through Batch, as
// model.Admit checks it.
func BenchmarkBatchVariedBatch100(b *testing.B) {
	base := NewModel()
	var buf []byte
	for i := 0; i < 5000; i++ {
		buf = orderdoc.AppendVaried(buf[:0], i)
		if err := base.Ingest(buf, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	docs := make([][]byte, 100)
	for i := range docs {
		docs[i] = orderdoc.AppendVaried(nil, 5000+i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch := base.NewBatch(ChangeStructural, Limits{})
		for _, d := range docs {
			if err := batch.Check(d); err != nil {
				b.Fatal(err)
			}
		}
		if batch.Widened() == nil {
			b.Fatal("the batch did not widen the model")
		}
	}
}
