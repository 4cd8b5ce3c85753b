package entity

import (
	"testing"

	"svc/bench/orderdoc"
)

// BenchmarkSplitArray: a POST body of 1,000 order documents (~1 MB) split
// into its elements, as Create does before admitting them.
func BenchmarkSplitArray(b *testing.B) {
	body := []byte{'['}
	for i := 0; i < 1000; i++ {
		if i > 0 {
			body = append(body, ',')
		}
		body = orderdoc.Append(body, i)
	}
	body = append(body, ']')
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if n := len(splitArray(body)); n != 1000 {
			b.Fatal(n)
		}
	}
}
