package predicate

import (
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"testing"
	"time"
)

// hashCaller answers each (document, function) pair with a fixed but
// arbitrary verdict, so one run sees every mix of answers.
type hashCaller struct {
	doc  string
	salt uint64
}

func (h *hashCaller) CallFunction(f *Function) (bool, error) {
	x := fnv.New64a()
	fmt.Fprintf(x, "%d|%s|%s", h.salt, f.Name, h.doc)
	return x.Sum64()&1 == 1, nil
}

// genFnCond is genCond with function leaves mixed in.
func genFnCond(r *mrand.Rand, depth int, times []time.Time) string {
	if depth >= 3 || r.IntN(3) != 0 {
		if r.IntN(3) == 0 {
			return fmt.Sprintf(`{"type":"function","function":{"name":"f%d"}}`, r.IntN(3))
		}
		return genLeaf(r, times)
	}
	op := pick(r, []string{"AND", "OR", "NOT"})
	n := 1
	if op != "NOT" {
		n = r.IntN(4)
	}
	var cs []string
	for range n {
		cs = append(cs, genFnCond(r, depth+1, times))
	}
	return group(op, cs...)
}

// TestPushdownIsASuperset: whatever the members answer, every entity the
// full condition selects is selected by its Pushdown, which has no
// function left; a condition without functions is its own pushdown.
func TestPushdownIsASuperset(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := mrand.New(mrand.NewPCG(seed, 11))
	times := []time.Time{time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)}
	var docs []string
	for range 60 {
		docs = append(docs, genDoc(r))
	}
	meta := &Meta{ID: "id", State: "NEW", CreationDate: times[0]}
	withFns, narrowed := 0, 0
	for i := 0; i < 3000; i++ {
		c, err := Compile([]byte(genFnCond(r, 0, times)), diffSchema)
		if err != nil {
			continue
		}
		p := c.Pushdown()
		if !c.HasFunctions() {
			if p != c {
				t.Fatal("a condition without functions was rebuilt")
			}
			continue
		}
		withFns++
		if p.HasFunctions() {
			t.Fatal("pushdown kept a function")
		}
		for _, d := range docs {
			pm := p.Match([]byte(d), meta)
			for salt := uint64(0); salt < 3; salt++ {
				ok, err := c.Eval([]byte(d), meta, &hashCaller{doc: d, salt: salt})
				if err != nil {
					t.Fatal(err)
				}
				if ok && !pm {
					t.Fatalf("Eval selects what Pushdown drops\ncondition %v\ndoc %s", c.root, d)
				}
			}
			if !pm {
				narrowed++
			}
		}
	}
	if withFns < 500 || narrowed == 0 {
		t.Fatalf("too weak: %d conditions with functions, %d documents ruled out by a pushdown", withFns, narrowed)
	}
}

func TestPushdownShapes(t *testing.T) {
	fn := `{"type":"function","function":{"name":"f"}}`
	cases := []struct {
		cond string
		docs map[string]bool // document → Pushdown.Match
	}{
		// AND keeps the simple leaf: it narrows.
		{group("AND", simple("$.price", "EQUALS", 12), fn), map[string]bool{`{"price":12}`: true, `{"price":13}`: false}},
		// OR with a function cannot narrow.
		{group("OR", simple("$.price", "EQUALS", 12), fn), map[string]bool{`{"price":12}`: true, `{"price":13}`: true}},
		// NOT over a function, or over anything holding one, cannot narrow.
		{group("NOT", fn), map[string]bool{`{"price":12}`: true}},
		{group("NOT", group("AND", simple("$.price", "EQUALS", 12), fn)), map[string]bool{`{"price":12}`: true, `{"price":13}`: true}},
		// NOT without a function keeps narrowing.
		{group("AND", group("NOT", simple("$.price", "EQUALS", 12)), fn), map[string]bool{`{"price":12}`: false, `{"price":13}`: true}},
	}
	for _, tc := range cases {
		p := mustCompile(t, tc.cond, testSchema).Pushdown()
		for d, want := range tc.docs {
			if got := p.Match([]byte(d), nil); got != want {
				t.Errorf("%s on %s: %v, want %v", tc.cond, d, got, want)
			}
		}
	}
}
