package predicate

import (
	"fmt"
	"strings"
	"testing"
)

// benchDoc is a ~1 KB entity document; "status" sits in the middle and
// "zlast" at the end, so the two equality benchmarks bracket a lookup.
func benchDoc(i int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"` + fmt.Sprintf("%08d", i) + `","price":` + fmt.Sprint(i%1000) + `,"name":"customer name ` + fmt.Sprint(i) + `",`)
	for k := 0; k < 10; k++ {
		fmt.Fprintf(&b, `"f%02d":"some filler text value %d",`, k, k*i)
	}
	fmt.Fprintf(&b, `"status":"%s","address":{"street":"1 Long Road","city":"Springfield","zip":"12345"},`, []string{"NEW", "OPEN", "CLOSED"}[i%3])
	b.WriteString(`"tags":["red","green","blue","yellow"],"items":[{"sku":"A-1","qty":2},{"sku":"B-2","qty":5},{"sku":"C-3","qty":1}],`)
	for k := 10; k < 16; k++ {
		fmt.Fprintf(&b, `"f%02d":%d.25,`, k, k*i)
	}
	fmt.Fprintf(&b, `"created":"2024-05-%02dT10:00:00Z","zlast":"v%d"}`, 1+i%28, i%50)
	return []byte(b.String())
}

var benchSchema = NewFieldMap(map[string]TypeSet{
	"$.status": Types(TypeString), "$.zlast": Types(TypeString), "$.price": Types(TypeInteger),
	"$.address.city": Types(TypeString), "$.tags[*]": Types(TypeString), "$.items[*].qty": Types(TypeInteger),
	"$.name": Types(TypeString),
})

func benchMatch(b *testing.B, cond string) {
	b.Run("bytes", func(b *testing.B) { benchMatchMode(b, cond, false) })
	b.Run("doc", func(b *testing.B) { benchMatchMode(b, cond, true) })
}

// benchMatchMode evaluates over raw bytes (Match) or over documents
// prepared once with NewDoc (MatchDoc), as a memory engine would keep them.
func benchMatchMode(b *testing.B, cond string, prepared bool) {
	c, err := Compile([]byte(cond), benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([][]byte, 1024)
	size := 0
	for i := range docs {
		docs[i] = benchDoc(i)
		size += len(docs[i])
	}
	meta := &Meta{State: "NEW"}
	prep := make([]*Doc, len(docs))
	for i, d := range docs {
		prep[i] = NewDoc(d)
	}
	b.SetBytes(int64(size / len(docs)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		var ok bool
		if prepared {
			ok = c.MatchDoc(prep[i&1023], meta)
		} else {
			ok = c.Match(docs[i&1023], meta)
		}
		if ok {
			n++
		}
	}
	if n == 0 {
		b.Fatal("nothing matched")
	}
}

func BenchmarkMatchEqualsMiddle(b *testing.B) {
	benchMatch(b, simple("$.status", "EQUALS", "OPEN"))
}

func BenchmarkMatchEqualsLast(b *testing.B) {
	benchMatch(b, simple("$.zlast", "EQUALS", "v7"))
}

func BenchmarkMatchEqualsNumber(b *testing.B) {
	benchMatch(b, simple("$.price", "EQUALS", 7))
}

func BenchmarkMatchGroup(b *testing.B) {
	benchMatch(b, group("AND", simple("$.price", "GREATER_OR_EQUAL", 100),
		group("OR", simple("$.status", "EQUALS", "OPEN"), simple("$.address.city", "STARTS_WITH", "Spring")),
		`{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"NEW"}`))
}

func BenchmarkMatchRegex(b *testing.B) {
	benchMatch(b, simple("$.name", "MATCHES_PATTERN", "customer name [0-9]*7"))
}

func BenchmarkMatchWildcard(b *testing.B) {
	benchMatch(b, simple("$.items[*].qty", "GREATER_THAN", 4))
}

func BenchmarkCompile(b *testing.B) {
	src := []byte(group("AND", simple("$.price", "GREATER_OR_EQUAL", 100), simple("$.status", "EQUALS", "OPEN")))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(src, benchSchema); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewDoc(b *testing.B) {
	d := benchDoc(7)
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		NewDoc(d)
	}
}
