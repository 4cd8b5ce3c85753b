package fast

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The operations svc must serve are listed in docs/operations.md, generated
// from the route table (docs/decisions/0001-knowledge-in-the-repository.md);
// the coverage tests compare the router and the served OpenAPI document with
// it in every clone. The external wire contract the list was taken from is
// not part of the repository: where it is present beside the repository,
// the tests also compare the list with it.

// requiredOperations reads docs/operations.md.
func requiredOperations(t *testing.T) []Operation {
	t.Helper()
	raw, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatalf("reading the operations list: %v", err)
	}
	ops, err := ParseOperations(raw)
	if err != nil {
		t.Fatalf("docs/operations.md: %v", err)
	}
	return ops
}

// contractFile is the external wire contract's name, looked for at the path
// in SVC_WIRE_CONTRACT or in the shared reference directory beside the
// repository. SVC_WIRE_CONTRACT=none runs the tests as a clone without the
// contract does.
const contractFile = "wire-contract.yaml"

// wireContract returns the path items of the external wire contract, or nil
// when it is not available in this clone.
func wireContract(t *testing.T) map[string]map[string]any {
	t.Helper()
	path := os.Getenv("SVC_WIRE_CONTRACT")
	if path == "none" {
		path = ""
	} else if path == "" {
		dir, _ := os.Getwd()
		for i := 0; i < 5 && path == ""; i++ {
			p := filepath.Join(dir, "..", "shared", "reference", contractFile)
			if _, err := os.Stat(p); err == nil {
				path = p
			}
			dir = filepath.Dir(dir)
		}
	}
	if path == "" {
		t.Logf("%s not present: compared router and OpenAPI document with docs/operations.md only", contractFile)
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &wc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(wc.Paths) == 0 {
		t.Fatalf("%s has no paths", path)
	}
	return wc.Paths
}

// contractOperations lists the contract's operations as "METHOD path" →
// operationId.
func contractOperations(paths map[string]map[string]any) map[string]string {
	out := map[string]string{}
	for p, item := range paths {
		for m, raw := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options":
				op, _ := raw.(map[string]any)
				id, _ := op["operationId"].(string)
				out[strings.ToUpper(m)+" "+p] = id
			}
		}
	}
	return out
}

// TestOperationsListMatchesWireContract: docs/operations.md's contract part
// is exactly the contract's operations with their operation ids. Without
// the contract the list is checked for its own shape (87 operations on 71
// paths, none an extension), which is what the list committed to.
func TestOperationsListMatchesWireContract(t *testing.T) {
	t.Parallel()
	ops := requiredOperations(t)
	mine := map[string]string{}
	paths := map[string]bool{}
	for _, o := range ops {
		if o.Extension {
			continue
		}
		mine[o.Key()] = o.OpID
		paths[o.Path] = true
	}
	if len(mine) != 87 || len(paths) != contractPaths {
		t.Errorf("docs/operations.md lists %d contract operations on %d paths, want 87 on %d", len(mine), len(paths), contractPaths)
	}
	wc := wireContract(t)
	if wc == nil {
		return
	}
	contract := contractOperations(wc)
	var diffs []string
	for k, id := range contract {
		if got, ok := mine[k]; !ok {
			diffs = append(diffs, "missing "+k)
		} else if got != id {
			diffs = append(diffs, k+": operation id "+got+", contract "+id)
		}
	}
	for k := range mine {
		if _, ok := contract[k]; !ok {
			diffs = append(diffs, "not in the contract: "+k)
		}
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestParseOperationsRoundTrip: the list parses back into what rendered it,
// so the coverage tests read exactly what generation wrote.
func TestParseOperationsRoundTrip(t *testing.T) {
	t.Parallel()
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseOperations(OperationsMarkdown(ops))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ops) {
		t.Fatalf("round trip differs:\n%+v\nwant\n%+v", back, ops)
	}
	if _, err := ParseOperations([]byte("| GET | `/x` | `x` | `p` (body, string) | — |\n")); err == nil {
		t.Error("a parameter in an unknown place parsed")
	}
}
