package opmetrics

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// epoch anchors Now: time.Since of a time with a monotonic reading reads
// the clock once, where time.Now reads it twice (wall and monotonic).
var epoch = time.Now()

// Now is a monotonic clock reading in nanoseconds, the start of a sample
// for Op.Done and Histogram.Done: one clock read at each end of a timed
// operation instead of the three of time.Now and time.Since.
func Now() int64 { return int64(time.Since(epoch)) }

// shards of a Histogram: a sample goes to one picked from the low bits of
// its end time, so the two cores of a small machine rarely update the same
// cache line; a scrape sums them.
const shards = 8

// Histogram is a Prometheus histogram (cumulative le buckets, _sum and
// _count, written as the metrics library writes its PrometheusHistogram)
// whose samples are atomic adds without a lock: the metrics library's
// histograms take a mutex per sample, which every request of the hot paths
// paid once per histogram, contended across cores (issue 25). Written at
// scrape time by the writer of its Set (Set.Histogram).
type Histogram struct {
	name   string    // full series name, with labels
	family string    // name without labels
	upper  []float64 // le bounds in seconds, as labelled
	ns     []int64   // the same bounds in nanoseconds
	stride int       // words per shard: len(upper)+1 buckets (+Inf last), the sum in ns, padding to 64 bytes
	c      []atomic.Uint64
}

func newHistogram(name string, upper []float64) *Histogram {
	h := &Histogram{name: name, family: name, upper: upper, ns: make([]int64, len(upper))}
	if i := strings.IndexByte(name, '{'); i >= 0 {
		h.family = name[:i]
	}
	for i, u := range upper {
		h.ns[i] = int64(u * 1e9)
	}
	h.stride = (len(upper) + 2 + 7) &^ 7
	h.c = make([]atomic.Uint64, shards*h.stride)
	return h
}

// Done records the time since start (a Now reading).
func (h *Histogram) Done(start int64) {
	end := Now()
	d := end - start
	if d < 0 {
		d = 0
	}
	i := 0
	for i < len(h.ns) && d > h.ns[i] {
		i++
	}
	s := h.c[int(uint64(end)>>3&(shards-1))*h.stride:]
	s[i].Add(1)
	s[len(h.ns)+1].Add(uint64(d))
}

// Update records a sample of v seconds (negative values are ignored, as
// the metrics library ignores them).
func (h *Histogram) Update(v float64) {
	if !(v >= 0) {
		return
	}
	i := 0
	for i < len(h.upper) && v > h.upper[i] {
		i++
	}
	s := h.c[int(uint64(Now())>>3&(shards-1))*h.stride:]
	s[i].Add(1)
	s[len(h.ns)+1].Add(uint64(v * 1e9))
}

// counts sums the shards: the samples per bucket (+Inf last) and the sum
// in nanoseconds.
func (h *Histogram) counts() ([]uint64, uint64) {
	n := make([]uint64, len(h.upper)+1)
	var sum uint64
	for s := 0; s < shards; s++ {
		c := h.c[s*h.stride:]
		for i := range n {
			n[i] += c[i].Load()
		}
		sum += c[len(n)].Load()
	}
	return n, sum
}

// labelled is name with one more label.
func labelled(name, label string) string {
	if i := strings.IndexByte(name, '{'); i >= 0 {
		return name[:i] + "_bucket" + name[i:len(name)-1] + "," + label + "}"
	}
	return name + "_bucket{" + label + "}"
}

// suffixed is name with suffix on its family name.
func suffixed(name, suffix string) string {
	if i := strings.IndexByte(name, '{'); i >= 0 {
		return name[:i] + suffix + name[i:]
	}
	return name + suffix
}

// writeTo writes the series as the metrics library's PrometheusHistogram
// does; nothing when it holds no sample.
func (h *Histogram) writeTo(w io.Writer) bool {
	n, sumNS := h.counts()
	var count uint64
	for _, c := range n {
		count += c
	}
	if count == 0 {
		return false
	}
	var cum uint64
	for i, ub := range h.upper {
		cum += n[i]
		fmt.Fprintf(w, "%s %d\n", labelled(h.name, fmt.Sprintf(`le="%v"`, ub)), cum)
	}
	fmt.Fprintf(w, "%s %d\n", labelled(h.name, `le="+Inf"`), count)
	sum := float64(sumNS) / 1e9
	if float64(int64(sum)) == sum {
		fmt.Fprintf(w, "%s %d\n", suffixed(h.name, "_sum"), int64(sum))
	} else {
		fmt.Fprintf(w, "%s %g\n", suffixed(h.name, "_sum"), sum)
	}
	fmt.Fprintf(w, "%s %d\n", suffixed(h.name, "_count"), count)
	return true
}

// Histogram is the histogram of the series name (labels included) with
// the le bounds upper, created on its first call and written with the
// set's metrics from then on. Later calls for name return the same one.
func (s *Set) Histogram(name string, upper []float64) *Histogram {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.hists[name]; h != nil {
		return h
	}
	h := newHistogram(name, upper)
	s.hists[name] = h
	return h
}

// writeHistograms writes every histogram with samples, grouped by family
// and sorted by name, each family under its # HELP and # TYPE lines.
func (s *Set) writeHistograms(w io.Writer) {
	s.mu.RLock()
	hs := make([]*Histogram, 0, len(s.hists))
	for _, h := range s.hists {
		hs = append(hs, h)
	}
	s.mu.RUnlock()
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].family != hs[j].family {
			return hs[i].family < hs[j].family
		}
		return hs[i].name < hs[j].name
	})
	var b strings.Builder
	prev := ""
	for _, h := range hs {
		var one strings.Builder
		if !h.writeTo(&one) {
			continue
		}
		if h.family != prev {
			metrics.WriteMetadataIfNeeded(&b, h.family, "histogram")
			prev = h.family
		}
		b.WriteString(one.String())
	}
	_, _ = io.WriteString(w, b.String())
}
