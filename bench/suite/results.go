package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// results are a run's samples: per build and scenario, one per round, and
// each round's yardsticks.
type results struct {
	builds  []build
	scens   []scenario
	yards   []yardsticks
	samples map[string]map[string][]sample // build → scenario → by round
}

func newResults(b []build, s []scenario) *results {
	r := &results{builds: b, scens: s, samples: map[string]map[string][]sample{}}
	for _, x := range b {
		r.samples[x.Name] = map[string][]sample{}
	}
	return r
}

func (r *results) add(_ int, b, sc string, s sample) {
	r.samples[b][sc] = append(r.samples[b][sc], s)
}

func col(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func (r *results) yardCol(f func(yardsticks) float64) []float64 {
	out := make([]float64, len(r.yards))
	for i, y := range r.yards {
		out[i] = f(y)
	}
	return out
}

func svcCPU(s sample) float64   { return s.SvcUs }
func totalCPU(s sample) float64 { return s.SvcUs + s.PgUs }

// multiples are the figure of sc as multiples of the yardsticks of the
// same round: server CPU over a signature and over /health (the same
// build's); on PostgreSQL, svc + PostgreSQL CPU over the bare INSERT.
func (r *results) multiples(b string, sc scenario) string {
	ss := r.samples[b][sc.Name]
	sign := r.yardCol(func(y yardsticks) float64 { return y.Sign })
	health := col(r.samples[b]["health/memory"], svcCPU)
	parts := []string{}
	if sc.Yard == "sign" {
		parts = append(parts, summarize(ratios(col(ss, svcCPU), r.yardCol(func(y yardsticks) float64 { return y.SignPar }))).String()+" × sign (per core)",
			summarize(ratios(col(ss, svcCPU), sign)).String()+" × sign (1 thread)")
	}
	if sc.Name != "health/memory" {
		parts = append(parts, summarize(ratios(col(ss, svcCPU), health)).String()+" × health")
	}
	switch sc.Yard {
	case "insert1":
		parts = append(parts, summarize(ratios(col(ss, totalCPU), r.yardCol(func(y yardsticks) float64 { return y.Insert1 }))).String()+" × INSERT")
	case "insert1000":
		parts = append(parts, summarize(ratios(col(ss, totalCPU), r.yardCol(func(y yardsticks) float64 { return y.Insert1k }))).String()+" × 1,000-row INSERT")
	}
	if sc.Yard != "sign" {
		parts = append(parts, summarize(ratios(col(ss, totalCPU), sign)).String()+" × sign")
	}
	return strings.Join(parts, ", ")
}

// table prints the yardsticks and, per build, every scenario's figures
// (median of the rounds ± the largest distance from it) as Markdown
// tables; with two builds, the change from the first to the second.
func (r *results) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Yardsticks (%d rounds; median ± largest distance from it)\n\n", len(r.yards))
	b.WriteString("| yardstick | CPU |\n|---|---|\n")
	fmt.Fprintf(&b, "| RSA-2048 signature (%s) | %s µs |\n", cryptoName(), summarize(r.yardCol(func(y yardsticks) float64 { return y.Sign })))
	fmt.Fprintf(&b, "| RSA-2048 signature, process CPU with one signer per core | %s µs |\n", summarize(r.yardCol(func(y yardsticks) float64 { return y.SignPar })))
	fmt.Fprintf(&b, "| RSA-2048 verification | %s µs |\n", summarize(r.yardCol(func(y yardsticks) float64 { return y.Verify })))
	if len(r.yards) > 0 && r.yards[0].Insert1 > 0 {
		fmt.Fprintf(&b, "| bare INSERT of an order, autocommit, PostgreSQL CPU per row | %s µs |\n", summarize(r.yardCol(func(y yardsticks) float64 { return y.Insert1 })))
		fmt.Fprintf(&b, "| bare 1,000-row INSERT of orders, PostgreSQL CPU per row | %s µs |\n", summarize(r.yardCol(func(y yardsticks) float64 { return y.Insert1k })))
	}
	for _, bd := range r.builds {
		fmt.Fprintf(&b, "\n### %s (%s)\n\n", bd.Name, bd.Path)
		b.WriteString("| scenario | -c | svc CPU µs | PostgreSQL CPU µs | rate /s | idle RSS MiB | as multiples |\n|---|---|---|---|---|---|---|\n")
		for _, sc := range r.scens {
			ss := r.samples[bd.Name][sc.Name]
			unit := ""
			if sc.Per > 1 {
				unit = " per entity"
			}
			pg := "—"
			if sc.Engine == "postgres" {
				pg = summarize(col(ss, func(s sample) float64 { return s.PgUs })).String()
			}
			fmt.Fprintf(&b, "| %s | %d | %s%s | %s | %s | %s | %s |\n", sc.Name, sc.C, summarize(col(ss, svcCPU)), unit, pg,
				summarize(col(ss, func(s sample) float64 { return s.Rate })),
				summarize(col(ss, func(s sample) float64 { return float64(s.RSSIdleKiB) / 1024 })), r.multiples(bd.Name, sc))
		}
	}
	b.WriteString(r.ratioTable())
	if len(r.builds) == 2 {
		a, h := r.builds[0].Name, r.builds[1].Name
		fmt.Fprintf(&b, "\n### %s → %s: svc (+ PostgreSQL) CPU per request or entity\n\n", a, h)
		fmt.Fprintf(&b, "| scenario | %s µs | %s µs | change |\n|---|---|---|---|\n", a, h)
		for _, sc := range r.scens {
			sa, sh := summarize(col(r.samples[a][sc.Name], totalCPU)), summarize(col(r.samples[h][sc.Name], totalCPU))
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", sc.Name, sa, sh, verdict(sa, sh))
		}
		sa := summarize(col(r.samples[a]["health/memory"], func(s sample) float64 { return float64(s.RSSIdleKiB) / 1024 }))
		sh := summarize(col(r.samples[h]["health/memory"], func(s sample) float64 { return float64(s.RSSIdleKiB) / 1024 }))
		fmt.Fprintf(&b, "| idle RSS after start-up (memory, jwt), MiB | %s | %s | %s |\n", sa, sh, verdict(sa, sh))
	}
	if len(r.builds) > 2 && r.builds[0].Name == "schema" {
		b.WriteString(r.variantTable())
	}
	return b.String()
}

// variantTable states, for -pg-variants, what each dropped part cost per
// create: the unchanged schema's svc + PostgreSQL CPU less the variant's,
// both medians of the same rounds, with the variant's spread.
func (r *results) variantTable() string {
	var b strings.Builder
	base := r.builds[0].Name
	b.WriteString("\n### What each part of the schema costs: svc + PostgreSQL CPU per request or entity, schema as migrated less the variant\n\n")
	b.WriteString("| scenario | variant (what is left out) | schema µs | variant µs | cost of the part µs | share |\n|---|---|---|---|---|---|\n")
	for _, sc := range r.scens {
		if sc.Engine != "postgres" {
			continue
		}
		sa := summarize(col(r.samples[base][sc.Name], totalCPU))
		for _, bd := range r.builds[1:] {
			sv := summarize(col(r.samples[bd.Name][sc.Name], totalCPU))
			d := sa.Median - sv.Median
			share := "—"
			if sa.Median > 0 {
				share = fmt.Sprintf("%.0f %%", 100*d/sa.Median)
			}
			fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s | %s | %s |\n", sc.Name, bd.Name, variantWhat(bd.Name), sa, sv, fmtNum(d), share)
		}
	}
	return b.String()
}

// ratioPairs are figures read as a ratio of two scenarios of the same
// build and round (issue 25 item 2's targets).
var ratioPairs = []struct{ Num, Den, What string }{
	{"collection-1kb-held/memory", "collection-1kb/memory", "collection into a server holding 300 000 entities ÷ into a fresh one (target ≤ 1.25)"},
	{"create-1kb/memory", "get-1kb/memory", "single create ÷ get (target ≤ 2)"},
	{"order-get/sqlite", "order-get/memory", "SQLite get ÷ memory get (issue 27, target ≤ 1.5)"},
	{"order-create/sqlite", "order-create/memory", "SQLite single create ÷ memory's"},
	{"order-collection/sqlite", "order-collection/memory", "SQLite collection ÷ memory's, per entity"},
}

// ratioTable prints, per build, each ratio pair present in the run as the
// median and spread of the per-round ratios of svc CPU.
func (r *results) ratioTable() string {
	var b strings.Builder
	for _, p := range ratioPairs {
		if !r.hasScenario(p.Num) || !r.hasScenario(p.Den) {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n### Ratios of svc CPU, per round (same build, same round)\n\n| ratio | build | median ± spread |\n|---|---|---|\n")
		}
		for _, bd := range r.builds {
			num, den := col(r.samples[bd.Name][p.Num], svcCPU), col(r.samples[bd.Name][p.Den], svcCPU)
			fmt.Fprintf(&b, "| %s | %s | %s |\n", p.What, bd.Name, summarize(ratios(num, den)))
		}
	}
	return b.String()
}

func (r *results) hasScenario(name string) bool {
	for _, sc := range r.scens {
		if sc.Name == name {
			return true
		}
	}
	return false
}

// writeBenchstat writes one file per build, NAME.txt, in the Go benchmark
// format (one line per scenario and round), and returns the file names.
func (r *results) writeBenchstat(dir string) ([]string, error) {
	var files []string
	for _, bd := range r.builds {
		var b strings.Builder
		// The same configuration lines in every file: benchstat then
		// compares the files column by column (a differing line would
		// make separate tables).
		b.WriteString("goos: linux\ngoarch: amd64\npkg: svc/bench/suite\n")
		for _, sc := range r.scens {
			for _, s := range r.samples[bd.Name][sc.Name] {
				pairs := []any{fmtNum(s.SvcUs), "svc-us/op"}
				if sc.Engine == "postgres" {
					pairs = append(pairs, fmtNum(s.PgUs), "pg-us/op", fmtNum(s.SvcUs+s.PgUs), "svc+pg-us/op")
				}
				b.WriteString(benchLine(sc.Name, pairs...) + "\n")
			}
		}
		name := bd.Name + ".txt"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

// findBenchstat is the given binary, benchstat on PATH or in
// $(go env GOPATH)/bin, or "".
func findBenchstat(given string) string {
	if given != "" {
		return given
	}
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "benchstat")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
