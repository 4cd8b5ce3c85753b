// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies directory src to dst (files only, as the fixture is).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runFuzz runs fuzz.sh in a copy of the fixture module (two packages,
// four targets, two of which fail on a seed) and returns its output and
// exit code.
func runFuzz(t *testing.T, args ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "fuzzmod"), dir)
	script, err := filepath.Abs("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = dir
	// The fixture is a module of its own: no workspace, no toolchain
	// download, and a build cache of the caller's.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("fuzz.sh: %v\n%s", err, out)
	return "", 0
}

// TestFuzzScriptRunsEveryTarget: a failing target does not stop the run;
// every target runs, every failure is listed at the end and the exit
// status is 1.
func TestFuzzScriptRunsEveryTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four fuzz targets")
	}
	out, code := runFuzz(t, "1x")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, target := range []string{"fuzzmod/a FuzzFails", "fuzzmod/a FuzzPasses", "fuzzmod/b FuzzAlsoFails", "fuzzmod/b FuzzAlsoPasses"} {
		if !strings.Contains(out, "== "+target+" (1x)") {
			t.Errorf("%s did not run:\n%s", target, out)
		}
	}
	i := strings.Index(out, "fuzz: 2 of 4 targets failed:")
	if i < 0 {
		t.Fatalf("no summary:\n%s", out)
	}
	if sum := out[i:]; !strings.Contains(sum, "FAIL fuzzmod/a FuzzFails\n") || !strings.Contains(sum, "FAIL fuzzmod/b FuzzAlsoFails\n") ||
		strings.Contains(sum, "Passes") {
		t.Errorf("summary:\n%s", sum)
	}

	// A filter keeps the targets it matches; passing ones exit 0, and a
	// filter matching nothing is an error, not a silent pass.
	out, code = runFuzz(t, "1x", "Passes$")
	if code != 0 || !strings.Contains(out, "fuzz: all 2 targets passed (1x each)") || strings.Contains(out, "Fails") {
		t.Errorf("filtered run: exit %d\n%s", code, out)
	}
	out, code = runFuzz(t, "1x", "NoSuchTarget")
	if code != 1 || !strings.Contains(out, "no fuzz targets") {
		t.Errorf("empty filter: exit %d\n%s", code, out)
	}
}
