package opmetrics_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"svc/platform/opmetrics"
)

// TestHistogramWritesAsTheLibrary: the lock-free histogram's series read
// exactly as the metrics library's PrometheusHistogram's for the same
// samples (buckets, +Inf, _sum, _count), under one # HELP and # TYPE per
// family, so /metrics did not change for its scrapers.
func TestHistogramWritesAsTheLibrary(t *testing.T) {
	bounds := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}
	samples := []float64{0.00005, 0.0001, 0.0003, 0.5, 2, 12, 0.25}
	metrics.ExposeMetadata(true)

	lib := metrics.NewSet()
	for _, name := range []string{`x_seconds{op="a"}`, `x_seconds{op="b"}`} {
		h := lib.GetOrCreatePrometheusHistogramExt(name, bounds)
		for _, v := range samples {
			h.Update(v)
		}
	}
	set := metrics.NewSet()
	ours := opmetrics.New(set)
	// Created in the other order: the writer sorts as the library does.
	for _, name := range []string{`x_seconds{op="b"}`, `x_seconds{op="a"}`} {
		h := ours.Histogram(name, bounds)
		for _, v := range samples {
			h.Update(v)
		}
	}
	ours.Histogram(`x_seconds{op="never"}`, bounds)
	var want, got bytes.Buffer
	lib.WritePrometheus(&want)
	set.WritePrometheus(&got)
	if got.String() != want.String() {
		t.Fatalf("got:\n%s\nwant (the library's):\n%s", got.String(), want.String())
	}
}

// TestHistogramConcurrentSamples: samples from many goroutines at once
// are all counted (run with -race).
func TestHistogramConcurrentSamples(t *testing.T) {
	set := metrics.NewSet()
	op := opmetrics.New(set).Storage("memory", "Get")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				op.Done(opmetrics.Now(), nil)
			}
		}()
	}
	wg.Wait()
	out := scrape(set)
	for _, want := range []string{
		`svc_storage_operation_duration_seconds_count{engine="memory",op="Get",outcome="ok"} 8000`,
		`svc_storage_operation_duration_seconds_bucket{engine="memory",op="Get",outcome="ok",le="+Inf"} 8000`,
		"# TYPE svc_storage_operation_duration_seconds histogram\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// BenchmarkOpDoneParallel is one sample of an existing series from every
// core at once (the contention the metrics library's per-histogram mutex
// had).
func BenchmarkOpDoneParallel(b *testing.B) {
	op := opmetrics.New(metrics.NewSet()).Storage("memory", "Get")
	op.Done(opmetrics.Now(), nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op.Done(opmetrics.Now(), nil)
		}
	})
}

// BenchmarkLibraryHistogramParallel is the same with the metrics library's
// PrometheusHistogram and time.Now, what Op did before.
func BenchmarkLibraryHistogramParallel(b *testing.B) {
	h := metrics.NewSet().GetOrCreatePrometheusHistogram(`x_seconds`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.UpdateDuration(time.Now())
		}
	})
}
