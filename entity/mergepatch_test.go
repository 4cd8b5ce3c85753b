package entity

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestMergePatchSemantics: RFC 7396 beyond appendix A (TestMergePatch),
// and what svc adds: text kept as written, repeated names counted once.
func TestMergePatchSemantics(t *testing.T) {
	for _, c := range []struct{ name, target, patch, want string }{
		{"null deletes at depth", `{"a":{"b":{"c":1,"d":2}}}`, `{"a":{"b":{"c":null}}}`, `{"a":{"b":{"d":2}}}`},
		{"arrays replace", `{"a":[1,{"b":2}]}`, `{"a":[{"c":null}]}`, `{"a":[{"c":null}]}`},
		{"object replaces scalar, nulls stripped", `{"a":1}`, `{"a":{"b":null,"c":{"d":null,"e":1}}}`, `{"a":{"c":{"e":1}}}`},
		{"non-object patch replaces", `{"a":1}`, `[{"a":null}]`, `[{"a":null}]`},
		{"scalar patch replaces", `{"a":1}`, ` 1E700 `, `1E700`},
		{"non-object target", `"text"`, `{"a":{"b":null},"c":1}`, `{"a":{},"c":1}`},
		{"numbers as written", `{"a":1E700,"b":-0.10}`, `{"c":1e-700}`, `{"a":1E700,"b":-0.10,"c":1e-700}`},
		{"whitespace", " {\n \"a\" : { \"b\" : 1 } ,\t\"c\":[1, 2]\n} ", ` { "a" : { "d" : true } } `, `{"a":{"b":1,"d":true},"c":[1, 2]}`},
		{"escaped names match", `{"a\u0062":1,"c":2}`, `{"ab":null,"\u0063":3}`, `{"c":3}`},
		{"strings with structure", `{"a":"}{\"","b":"x"}`, `{"b":"]\\\"[","n":"null"}`, `{"a":"}{\"","b":"]\\\"[","n":"null"}`},
		{"repeated patch name: last wins", `{"a":{"x":1}}`, `{"a":{"y":1},"a":{"z":1}}`, `{"a":{"x":1,"z":1}}`},
		{"repeated patch name: null last", `{"a":1}`, `{"a":2,"a":null}`, `{}`},
		{"repeated new name: last place", `{}`, `{"a":1,"b":2,"a":3}`, `{"b":2,"a":3}`},
		{"repeated target name: last kept", `{"a":1,"b":2,"a":3}`, `{"b":4}`, `{"b":4,"a":3}`},
		{"empty patch normalises only touched objects", `{"a":1 , "b":{"c" : 1}}`, `{}`, `{"a":1,"b":{"c" : 1}}`},
	} {
		got, err := MergePatch([]byte(c.target), []byte(c.patch))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: MergePatch(%s, %s) = %s %v, want %s", c.name, c.target, c.patch, got, err, c.want)
		}
	}
	// Wide objects take the hashed path: the same rules hold there.
	var tgt, pat, want strings.Builder
	tgt.WriteString(`{"dup":0`)
	pat.WriteString(`{`)
	want.WriteString(`{`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&tgt, `,"k%d":%d`, i, i)
		if i > 0 {
			pat.WriteByte(',')
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&pat, `"k%d":null`, i)
		case 1:
			fmt.Fprintf(&pat, `"k%d":"x","n%d":1,"n%d":2`, i, i, i)
		default:
			fmt.Fprintf(&pat, `"k%d":{"z":null}`, i)
		}
	}
	tgt.WriteString(`,"dup":1}`)
	pat.WriteString(`}`)
	for i := 0; i < 40; i++ {
		switch i % 3 {
		case 1:
			fmt.Fprintf(&want, `"k%d":"x",`, i)
		case 2:
			fmt.Fprintf(&want, `"k%d":{},`, i)
		}
	}
	want.WriteString(`"dup":1`)
	for i := 1; i < 40; i += 3 {
		fmt.Fprintf(&want, `,"n%d":2`, i)
	}
	want.WriteString(`}`)
	got, err := MergePatch([]byte(tgt.String()), []byte(pat.String()))
	if err != nil || string(got) != want.String() {
		t.Errorf("wide: %s %v\nwant %s", got, err, want.String())
	}
	for _, bad := range []string{`{"a":`, `{"a" 1}`, `{"a":1,}`, `{a:1}`, `{"a":"x}`} {
		if out, err := MergePatch([]byte(`{"a":0}`), []byte(bad)); err == nil {
			t.Errorf("malformed patch %s merged into %s", bad, out)
		}
	}
}

// TestMergePatchLinearWork: the merge's steps (bytes read, key
// comparisons, bytes written) stay within a fixed multiple of the input
// for wide and deep documents alike. The old merge re-parsed every level
// and searched members one by one: its steps grew with width times width
// and depth times size.
func TestMergePatchLinearWork(t *testing.T) {
	type input struct {
		name          string
		target, patch []byte
	}
	var in []input
	for _, kb := range []int{1, 16, 256} {
		in = append(in, input{fmt.Sprintf("wide %d KB", kb), wideTarget(kb), widePatch(kb)})
	}
	for _, d := range []int{10, 256, 2000, 9999} {
		in = append(in, input{fmt.Sprintf("deep %d", d), deepDoc(d, `{"old":1}`), deepDoc(d, `{"new":true,"s":null}`)})
	}
	for _, c := range in {
		var w MergeWork
		if _, err := mergePatch(c.target, c.patch, mergeOpts{work: &w}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		size := len(c.target) + len(c.patch)
		// Each byte is read once and written at most once; each member
		// costs a comparison or two.
		if per := float64(w.Total()) / float64(size); per > 3 {
			t.Errorf("%s: %d steps for %d bytes (%.1f a byte): %+v", c.name, w.Total(), size, per, w)
		}
		if w.Scanned != size {
			t.Errorf("%s: read %d bytes of %d: every byte once", c.name, w.Scanned, size)
		}
	}
}

// TestMergePatchAllocationsFlat: allocation per KB does not grow with
// the patch (the old merge copied every nested level: 11.5 GB for a
// 60 KB body 10,000 deep).
func TestMergePatchAllocationsFlat(t *testing.T) {
	perKB := func(target, patch []byte) (bytesPerKB, allocs float64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := MergePatch(target, patch); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		kb := float64(len(target)+len(patch)) / 1024
		return float64(after.TotalAlloc-before.TotalAlloc) / kb, float64(after.Mallocs - before.Mallocs)
	}
	for _, c := range []struct {
		name       string
		small, big [2][]byte
	}{
		{"wide", [2][]byte{wideTarget(8), widePatch(8)}, [2][]byte{wideTarget(512), widePatch(512)}},
		{"deep", [2][]byte{deepDoc(100, `1`), deepDoc(100, `{"a":null}`)}, [2][]byte{deepDoc(9999, `1`), deepDoc(9999, `{"a":null}`)}},
	} {
		small, _ := perKB(c.small[0], c.small[1])
		big, allocs := perKB(c.big[0], c.big[1])
		// Some KB of index per KB of input (a deep document is all
		// members), whatever the size; the number of allocations is a
		// handful of slices and maps.
		if big > 1.5*small+4096 || big > 64<<10 {
			t.Errorf("%s: %.0f B/KB allocated at the big size, %.0f at the small", c.name, big, small)
		}
		if allocs > 2000 {
			t.Errorf("%s: %.0f allocations for one merge", c.name, allocs)
		}
	}
}

// TestMergePatchStopsWhenAsked: the stop check runs while the merge
// works, not only between phases; once it fails the merge ends with its
// error, having done a fraction of the work.
func TestMergePatchStopsWhenAsked(t *testing.T) {
	target, patch := wideTarget(2048), widePatch(2048)
	var full MergeWork
	if _, err := mergePatch(target, patch, mergeOpts{work: &full, stop: func() error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if full.Polls < 32 {
		t.Fatalf("%d polls over %d steps: the check must run every %d", full.Polls, full.Total(), stopEvery)
	}
	calls := 0
	var w MergeWork
	out, err := mergePatch(target, patch, mergeOpts{work: &w, stop: func() error {
		if calls++; calls == 3 {
			return ErrClientGone
		}
		return nil
	}})
	if !errors.Is(err, ErrClientGone) || out != nil {
		t.Fatalf("merge went on after the stop: %d bytes, %v", len(out), err)
	}
	if w.Polls != 3 || w.Total() > full.Total()/4 {
		t.Fatalf("stopped after %d polls and %d of %d steps", w.Polls, w.Total(), full.Total())
	}
}

// TestMergePatchSizeCap: a result over the cap ends the merge with the
// MaxBytes limit, however it got there.
func TestMergePatchSizeCap(t *testing.T) {
	target := []byte(`{"a":"` + strings.Repeat("x", 900) + `"}`)
	patch := []byte(`{"b":"` + strings.Repeat("y", 200) + `"}`)
	if _, err := mergePatch(target, patch, mergeOpts{maxBytes: 1200}); err != nil {
		t.Fatalf("within the cap: %v", err)
	}
	_, err := mergePatch(target, patch, mergeOpts{maxBytes: 1000})
	if err == nil || !strings.Contains(err.Error(), "MaxBytes=1000") {
		t.Fatalf("over the cap: %v", err)
	}
}

// TestDeeperThan reads only as far as the first level past the limit.
func TestDeeperThan(t *testing.T) {
	for _, c := range []struct {
		doc  string
		max  int
		want bool
	}{
		{`{"a":[{"b":1}]}`, 3, false},
		{`{"a":[{"b":1}]}`, 2, true},
		{`{"a":"[[[[[[{{{{"}`, 1, false},
		{`{"a\"[[[":1}`, 1, false},
		{`[[],[],[[]]]`, 3, false},
		{`[[],[],[[]]]`, 2, true},
		{`[[],[],[[[]]]]`, 4, false},
		{`[[],[],[[[]]]]`, 3, true},
		{`{"a":"unterminated`, 0, true},
		{`"[[[`, 0, false},
	} {
		if got := deeperThan([]byte(c.doc), c.max); got != c.want {
			t.Errorf("deeperThan(%s, %d) = %v", c.doc, c.max, got)
		}
	}
	// A prefix past the limit decides, whatever follows.
	b := append(bytes.Repeat([]byte("["), 300), "garbage"...)
	if !deeperThan(b, 256) {
		t.Error("300 open brackets within 256")
	}
}
