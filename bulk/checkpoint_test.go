package bulk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeCheckpoint(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "import.checkpoint")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadCheckpointRefusesDisorderedRanges: a checkpoint whose committed
// ranges are out of order, overlap, are empty or reversed, or start before
// document 0 is refused with a message naming the file, the source and the
// range. Before, [[300,600],[0,300]] loaded and Done answered "not
// committed" for documents 0-299, so a resume sent them again.
func TestLoadCheckpointRefusesDisorderedRanges(t *testing.T) {
	cases := []struct {
		name, done string
		want       string // "" = accepted
	}{
		{"in order", `[[0,300],[400,600]]`, ""},
		{"adjacent", `[[0,300],[300,600]]`, ""},
		{"none", `[]`, ""},
		{"out of order", `[[300,600],[0,300]]`, "range 2 [0, 300) is out of order"},
		{"out of order, apart", `[[400,600],[0,100]]`, "range 2 [0, 100) is out of order"},
		{"overlapping", `[[0,300],[200,500]]`, "range 2 [200, 500) overlaps range 1 [0, 300)"},
		{"contained", `[[0,300],[100,200]]`, "range 2 [100, 200) overlaps range 1 [0, 300)"},
		{"same start", `[[0,300],[0,100]]`, "range 2 [0, 100) overlaps range 1 [0, 300)"},
		{"duplicate", `[[0,300],[0,300]]`, "range 2 [0, 300) overlaps range 1 [0, 300)"},
		{"third out of order", `[[0,10],[20,30],[15,18]]`, "range 3 [15, 18) is out of order"},
		{"empty", `[[5,5]]`, "range 1 [5, 5) is empty or reversed"},
		{"reversed", `[[300,0]]`, "range 1 [300, 0) is empty or reversed"},
		{"negative", `[[-300,0],[0,300]]`, "range 1 [-300, 0) starts before document 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeCheckpoint(t, `{"version":1,"model":"orders.1","sources":{"a.ndjson":{"size":10,"fingerprint":"x","done":`+c.done+`}}}`)
			cp, err := LoadCheckpoint(p, "orders.1")
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded (Done(a.ndjson, 0) = %v, DoneCount %d), want refused with %q", cp.Done("a.ndjson", 0), cp.DoneCount(), c.want)
			}
			for _, part := range []string{p, "source a.ndjson", c.want, "remove it to start over"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
		})
	}
}

// TestLoadCheckpointRefusals: what else a checkpoint file can get wrong.
func TestLoadCheckpointRefusals(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not JSON", `{"version":1,`, "is not readable"},
		{"other model", `{"version":1,"model":"other.1","sources":{}}`, "belongs to model other.1, not orders.1"},
		{"other version", `{"version":2,"model":"orders.1","sources":{}}`, "has version 2"},
		{"no version", `{"model":"orders.1","sources":{}}`, "has version 0"},
		{"no model", `{"version":1,"sources":{}}`, "names no model"},
		{"null source", `{"version":1,"model":"orders.1","sources":{"a":null}}`, "source a: the record is null"},
		{"range of one number", `{"version":1,"model":"orders.1","sources":{"a":{"done":[[1]]}}}`, "range 1 [1, 0) is empty or reversed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadCheckpoint(writeCheckpoint(t, c.body), "orders.1")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want an error saying %q", err, c.want)
			}
		})
	}
	cp, err := LoadCheckpoint(filepath.Join(t.TempDir(), "absent"), "orders.1")
	if err != nil || cp.DoneCount() != 0 {
		t.Fatalf("absent file: %v, %v; want an empty checkpoint", cp, err)
	}
}

// TestCheckpointMarkDoneSaveLoad: marks in any order merge into sorted,
// disjoint ranges; Done and DoneCount answer from them; a saved checkpoint
// loads back (it passes the load checks) with the same answers.
func TestCheckpointMarkDoneSaveLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cp")
	cp, err := LoadCheckpoint(p, "m.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{500, 600}, {0, 100}, {100, 200}, {300, 400}, {350, 450}, {7, 7}, {9, 3}} {
		cp.Mark("a", r[0], r[1])
	}
	cp.Mark("b", 0, 10)
	want := [][2]int{{0, 200}, {300, 450}, {500, 600}}
	if got := cp.st.Sources["a"].Done; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("merged ranges %v, want %v", got, want)
	}
	check := func(cp *Checkpoint) {
		t.Helper()
		if n := cp.DoneCount(); n != 200+150+100+10 {
			t.Errorf("DoneCount %d, want 460", n)
		}
		for i, done := range map[int]bool{0: true, 199: true, 200: false, 299: false, 300: true, 449: true, 450: false, 500: true, 599: true, 600: false, -1: false} {
			if cp.Done("a", i) != done {
				t.Errorf("Done(a, %d) = %v, want %v", i, !done, done)
			}
		}
		if cp.Done("absent", 0) {
			t.Error("Done of an unknown source")
		}
	}
	check(cp)
	if err := cp.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	again, err := LoadCheckpoint(p, "m.1")
	if err != nil {
		t.Fatal(err)
	}
	check(again)
	// In memory only: Save writes nothing.
	mem, _ := openCheckpoint("", ModelRef{Name: "m", Version: 1})
	mem.Mark("a", 0, 1)
	if err := mem.Save(); err != nil || !mem.Done("a", 0) {
		t.Fatalf("in-memory checkpoint: %v", err)
	}
}

// TestCheckpointAttach: a file recorded before must be unchanged (size and
// fingerprint); standard input's record is reset on every run.
func TestCheckpointAttach(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.ndjson")
	os.WriteFile(src, []byte("{\"a\":1}\n{\"a\":2}\n"), 0o644)
	cpPath := filepath.Join(dir, "cp")
	cp, _ := LoadCheckpoint(cpPath, "m.1")
	s := Source{Path: src, Size: 16}
	if err := cp.Attach(s); err != nil {
		t.Fatal(err)
	}
	cp.Mark(src, 0, 1)
	cp.Attach(Source{Path: "-"})
	cp.Mark("-", 0, 5)
	if err := cp.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := LoadCheckpoint(cpPath, "m.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Attach(s); err != nil || !again.Done(src, 0) {
		t.Fatalf("unchanged file: %v, done %v", err, again.Done(src, 0))
	}
	if err := again.Attach(Source{Path: "-"}); err != nil || again.Done("-", 0) {
		t.Fatalf("stdin: %v, done %v; want its record reset", err, again.Done("-", 0))
	}
	os.WriteFile(src, []byte("{\"a\":9}\n{\"a\":2}\n"), 0o644)
	if err := again.Attach(s); err == nil || !strings.Contains(err.Error(), "changed since the checkpoint was written") {
		t.Fatalf("changed file: %v", err)
	}
	if err := again.Attach(Source{Path: src, Size: 17}); err == nil {
		t.Fatal("changed size accepted")
	}
}

// FuzzLoadCheckpoint: any checkpoint file either is refused or loads into
// ranges Done and DoneCount answer consistently from, and survives a Mark
// and a save: svc import never refuses a checkpoint it wrote itself.
func FuzzLoadCheckpoint(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"model":"m.1","sources":{"a":{"size":1,"fingerprint":"x","done":[[0,300],[400,600]]}}}`,
		`{"version":1,"model":"m.1","sources":{"a":{"done":[[300,600],[0,300]]}}}`,
		`{"version":1,"model":"m.1","sources":{"a":{"done":[[0,300],[200,500]]}}}`,
		`{"version":1,"model":"m.1","sources":{"a":{"done":[[-5,0]]},"b":null}}`,
		`{"version":1,"model":"m.1","sources":{"a":{"done":[[1]]}}}`,
		`{"version":1,"model":"m.1"}`, `{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(dir, "cp")
		if err := os.WriteFile(p, in, 0o600); err != nil {
			t.Fatal(err)
		}
		cp, err := LoadCheckpoint(p, "m.1")
		if err != nil {
			return
		}
		check := func(cp *Checkpoint) {
			total := 0
			for name, rec := range cp.st.Sources {
				for k, r := range rec.Done {
					total += r[1] - r[0]
					for _, i := range []int{r[0] - 1, r[0], r[1] - 1, r[1]} {
						inAny := false
						for _, q := range rec.Done {
							inAny = inAny || (q[0] <= i && i < q[1])
						}
						if cp.Done(name, i) != inAny {
							t.Fatalf("source %q range %d %v: Done(%d) = %v, want %v", name, k, r, i, !inAny, inAny)
						}
					}
				}
			}
			if n := cp.DoneCount(); n != total {
				t.Fatalf("DoneCount %d, want %d", n, total)
			}
		}
		check(cp)
		cp.Mark("a", 10, 20)
		check(cp)
		if err := cp.Save(); err != nil {
			t.Fatal(err)
		}
		again, err := LoadCheckpoint(p, "m.1")
		if err != nil {
			t.Fatalf("a checkpoint svc wrote is refused: %v", err)
		}
		check(again)
	})
}
