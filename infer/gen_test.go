package infer

import (
	"math/rand"
	"strconv"
	"strings"
)

// docGen writes random JSON documents that exercise every rule of the
// engine: names from a small alphabet (so documents collide on paths),
// integers of every class, decimals, temporal and plain strings, booleans,
// null, nested objects, arrays of primitives, of objects, of arrays and
// mixed arrays.
type docGen struct {
	r        *rand.Rand
	maxDepth int
	maxWidth int
}

var genNames = []string{"a", "b", "c", "id", "x_1", "k-y", "Z"}

var genScalars = []string{
	"0", "1", "-7", "127", "128", "-129", "32768", "2147483648", "9223372036854775808",
	"170141183460469231731687303715884105728", "1.5", "-0.25", "1e2", "1.0",
	"3.141592653589793238", "3.14159265358979323846", "1e-300",
	`"x"`, `""`, `"2024-01-15"`, `"2024-03"`, `"14:30"`, `"2024-06-20T10:15:30Z"`,
	`"2024-06-20T10:15:30"`, `"123"`, "true", "false", "null",
}

func newDocGen(seed int64) *docGen {
	return &docGen{r: rand.New(rand.NewSource(seed)), maxDepth: 4, maxWidth: 5}
}

func (g *docGen) doc() string {
	var b strings.Builder
	g.object(&b, 0)
	return b.String()
}

func (g *docGen) object(b *strings.Builder, depth int) {
	b.WriteByte('{')
	n := g.r.Intn(g.maxWidth + 1)
	seen := map[string]bool{}
	first := true
	for i := 0; i < n; i++ {
		name := genNames[g.r.Intn(len(genNames))]
		if seen[name] {
			continue
		}
		seen[name] = true
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(name))
		b.WriteByte(':')
		g.value(b, depth+1)
	}
	b.WriteByte('}')
}

func (g *docGen) value(b *strings.Builder, depth int) {
	k := g.r.Intn(10)
	if depth >= g.maxDepth {
		k = 0
	}
	switch {
	case k < 5:
		b.WriteString(genScalars[g.r.Intn(len(genScalars))])
	case k < 7:
		g.object(b, depth)
	default:
		g.array(b, depth)
	}
}

func (g *docGen) array(b *strings.Builder, depth int) {
	b.WriteByte('[')
	n := g.r.Intn(g.maxWidth + 1)
	// Most arrays are homogeneous in kind, the way real documents are; some
	// mix everything.
	mode := g.r.Intn(5)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case depth >= g.maxDepth || mode == 0:
			b.WriteString(genScalars[g.r.Intn(len(genScalars))])
		case mode == 1:
			b.WriteString(strconv.Itoa(g.r.Intn(70000) - 35000))
		case mode == 2:
			g.object(b, depth+1)
		case mode == 3:
			g.array(b, depth+1)
		default:
			g.value(b, depth+1)
		}
	}
	b.WriteByte(']')
}
