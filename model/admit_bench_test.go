package model

import (
	"fmt"
	"strings"
	"testing"

	"svc/storage"
)

func admitDoc(i int) []byte {
	var sb strings.Builder
	sb.WriteString(`{`)
	for f := 0; f < 20; f++ {
		fmt.Fprintf(&sb, `"field%02d":"value %d",`, f, i)
	}
	fmt.Fprintf(&sb, `"n":%d,"ok":true,"addr":{"city":"Zurich","zip":"8000"},"items":[{"sku":"A-1","qty":2,"price":9.95}]}`, i)
	return []byte(sb.String())
}

// BenchmarkAdmit is the gate every entity write passes: a ~1 KB document
// that fits a locked model (memory engine), with the model this node built
// at import still cached.
func BenchmarkAdmit(b *testing.B) { benchAdmit(b, false) }

// BenchmarkAdmitDecoded is the same with the model decoded from its stored
// SIMPLE_VIEW, as after a restart or on another node.
func BenchmarkAdmitDecoded(b *testing.B) { benchAdmit(b, true) }

func benchAdmit(b *testing.B, decoded bool) {
	s := New(newStore(b, "memory"), nil)
	k := storage.ModelKey{Name: "bench", Version: 1}
	if _, err := s.Import(ctxb, "A", k, FormatJSON, ConvSampleData, admitDoc(0)); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Lock(ctxb, "A", k); err != nil {
		b.Fatal(err)
	}
	if decoded {
		s.cache.forget("A", k)
	}
	docs := [][]byte{admitDoc(1)}
	b.SetBytes(int64(len(docs[0])))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Admit(ctxb, "A", k, docs); err != nil {
			b.Fatal(err)
		}
	}
}
