package throttle

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkFailFullTable is the flood the key bound exists for: every table
// holds MaxKeys live counters and each failure brings a fresh client id and
// address, so each one asks for room. Time advances by a millisecond per
// failure, so old counters expire at the rate new ones arrive.
func BenchmarkFailFullTable(b *testing.B) {
	const keys = 1 << 14
	l := New(Limits{PerClient: 5, PerAddress: 5, Window: time.Second, MaxKeys: keys})
	names := make([]string, 4*keys)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	now := t0
	for i := 0; i < keys; i++ {
		now = now.Add(time.Second / keys)
		l.Fail(names[i], names[i], now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second / keys)
		k := names[(keys+i)%len(names)]
		l.Fail(k, k, now)
	}
}

// BenchmarkSucceedFullTable: the trusted pairs' table under the same flood.
func BenchmarkSucceedFullTable(b *testing.B) {
	const keys = 1 << 14
	l := New(Limits{PerClient: 5, PerAddress: 5, Window: time.Second, MaxKeys: keys})
	names := make([]string, 4*keys)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	now := t0
	for i := 0; i < keys; i++ {
		now = now.Add(time.Second / keys)
		l.Succeed(names[i], names[i], now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second / keys)
		k := names[(keys+i)%len(names)]
		l.Succeed(k, k, now)
	}
}
