package workflow

import (
	"sync"
	"testing"
)

func storedOf(t testing.TB, workflows ...string) []byte {
	t.Helper()
	res, err := importErr(nil, importBody("REPLACE", workflows...))
	if err != nil {
		t.Fatal(err)
	}
	return res.Stored
}

func TestSetCache(t *testing.T) {
	c := NewSetCache(2)
	v1 := storedOf(t, wf("one", "A", `{"A":{}}`))
	v2 := storedOf(t, wf("two", "B", `{"B":{}}`))
	s1, err := c.Get("t", "m", 1, 1, v1)
	if err != nil || s1.workflows[0].w.Name != "one" {
		t.Fatal(err)
	}
	if again, _ := c.Get("t", "m", 1, 1, v2); again != s1 {
		t.Fatal("same revision recompiled")
	}
	if s2, _ := c.Get("t", "m", 1, 2, v2); s2 == s1 || s2.workflows[0].w.Name != "two" {
		t.Fatal("new revision not recompiled")
	}
	// Tenants and versions are separate entries.
	if o, _ := c.Get("other", "m", 1, 2, v1); o.workflows[0].w.Name != "one" {
		t.Fatal("tenant entries shared")
	}
	_, _ = c.Get("t", "m", 2, 1, v1)
	if len(c.entries) > 2 {
		t.Fatalf("%d entries over the bound", len(c.entries))
	}
	c.Forget("t", "m", 2)
	if _, ok := c.entries[cacheKey{"t", "m", 2}]; ok {
		t.Fatal("Forget kept the entry")
	}
	if _, err := c.Get("t", "bad", 1, 1, []byte("{")); err == nil {
		t.Fatal("undecodable stored bytes accepted")
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if _, err := c.Get("t", "m", i%3, int64(j%2), v1); err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

func BenchmarkSetCacheHit(b *testing.B) {
	c := NewSetCache(0)
	stored := storedOf(b, wf("w", "A", `{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},"B":{}}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get("tenant", "orders", 1, 7, stored); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompileStored(b *testing.B) {
	stored := storedOf(b, wf("w", "A", `{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},"B":{}}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompileStored(stored); err != nil {
			b.Fatal(err)
		}
	}
}

// A model deleted and created again restarts its revisions: the creation
// instant tells the new model's workflows from its predecessor's.
func TestSetCacheRecreatedModel(t *testing.T) {
	c := NewSetCache(0)
	v1 := storedOf(t, wf("one", "A", `{"A":{}}`))
	v2 := storedOf(t, wf("two", "B", `{"B":{}}`))
	if s, err := c.GetCreated("t", "m", 1, 100, 3, v1); err != nil || s.workflows[0].w.Name != "one" {
		t.Fatal(err)
	}
	if s, _ := c.GetCreated("t", "m", 1, 100, 3, v2); s.workflows[0].w.Name != "one" {
		t.Fatal("same model and revision recompiled")
	}
	if s, _ := c.GetCreated("t", "m", 1, 200, 3, v2); s.workflows[0].w.Name != "two" {
		t.Fatal("recreated model at the same revision served its predecessor's workflows")
	}
}
