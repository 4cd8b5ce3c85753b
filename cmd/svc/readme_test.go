package main

import (
	"os"
	"strings"
	"testing"

	"svc/platform/config"
)

// TestReadmeDocumentsEveryVariable keeps the README's configuration
// reference in step with the variable table.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range config.Vars(&config.Config{}) {
		if !strings.Contains(readme, "`"+v.Name+"`") {
			t.Errorf("README does not document %s", v.Name)
		}
	}
	for _, must := range []string{"make run", "make test", "## API status", "## Benchmarks", "## Configuration"} {
		if !strings.Contains(readme, must) {
			t.Errorf("README lacks %q", must)
		}
	}
}
