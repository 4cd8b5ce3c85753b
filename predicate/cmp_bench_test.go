package predicate

import (
	"testing"

	"github.com/buger/jsonparser"
)

func BenchmarkLookupJsonparser(b *testing.B) {
	d := benchDoc(7)
	keys := []string{"zlast"}
	b.ReportAllocs()
	for b.Loop() {
		jsonparser.Get(d, keys...)
	}
}

func BenchmarkLookupScan(b *testing.B) {
	d := benchDoc(7)
	keys := []string{"zlast"}
	b.ReportAllocs()
	for b.Loop() {
		lookup(d, keys)
	}
}
