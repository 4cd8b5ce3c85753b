package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// summary is the middle and spread of one figure over a run's rounds.
type summary struct {
	N         int
	Median    float64
	Min, Max  float64
	SpreadPct float64 // largest distance of a sample from the median, in % of it
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	out := summary{N: len(s), Median: m, Min: s[0], Max: s[len(s)-1]}
	if m != 0 {
		out.SpreadPct = 100 * math.Max(m-s[0], s[len(s)-1]-m) / math.Abs(m)
	}
	return out
}

// String is "123.4 ±5 %" (the spread left out for one sample).
func (s summary) String() string {
	if s.N == 0 {
		return "—"
	}
	v := fmtNum(s.Median)
	if s.N > 1 {
		v += fmt.Sprintf(" ±%.0f %%", s.SpreadPct)
	}
	return v
}

// fmtNum prints a figure with three significant digits or more.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// ratios divides each sample by the yardstick of its own round (xs[i] /
// yard[i]): a figure as a multiple of a fixed piece of work measured on
// the same machine at the same time.
func ratios(xs, yard []float64) []float64 {
	var out []float64
	for i := range xs {
		if i < len(yard) && yard[i] > 0 {
			out = append(out, xs[i]/yard[i])
		}
	}
	return out
}

// verdict compares a head summary with a base one: the change of the
// medians in %, and "~" when the ranges of the samples overlap (the change
// is within the noise of this run).
func verdict(base, head summary) string {
	if base.N == 0 || head.N == 0 || base.Median == 0 {
		return "—"
	}
	d := 100 * (head.Median - base.Median) / base.Median
	if base.N > 1 && head.N > 1 && head.Min <= base.Max && base.Min <= head.Max {
		return fmt.Sprintf("~ (%+.0f %%, ranges overlap)", d)
	}
	return fmt.Sprintf("%+.0f %%", d)
}

// benchName turns a scenario name into a benchstat benchmark name:
// "order-create/postgres" → "BenchmarkOrderCreate/postgres".
func benchName(s string) string {
	head, rest, _ := strings.Cut(s, "/")
	var b strings.Builder
	b.WriteString("Benchmark")
	for _, part := range strings.Split(head, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if rest != "" {
		b.WriteString("/" + rest)
	}
	return b.String()
}

// benchLine is one sample in the Go benchmark format benchstat reads:
// name, an iteration count (1: each line is one run's figure), then
// value-unit pairs.
func benchLine(name string, pairs ...any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s 1", benchName(name))
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, " %v %v", pairs[i], pairs[i+1])
	}
	return b.String()
}
