package fast

import (
	"encoding/json"
	"testing"
)

// TestOpenAPIDocumentsIdempotencyKey: the operations whose handlers honour
// Idempotency-Key, and only those, document the header, marked as an svc
// extension.
func TestOpenAPIDocumentsIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(servedDoc(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
				Parameters  []struct {
					In        string `json:"in"`
					Name      string `json:"name"`
					Extension bool   `json:"x-svc-extension"`
				} `json:"parameters"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			has, marked := false, false
			for _, p := range op.Parameters {
				if p.In == "header" && p.Name == "Idempotency-Key" {
					has, marked = true, p.Extension
				}
			}
			want := idempotentOps[op.OperationID]
			if has != want {
				t.Errorf("%s %s (%s): Idempotency-Key documented %v, want %v", method, path, op.OperationID, has, want)
			}
			if has && !marked {
				t.Errorf("%s %s: Idempotency-Key not marked x-svc-extension", method, path)
			}
			if has {
				seen[op.OperationID] = true
			}
		}
	}
	for id := range idempotentOps {
		if !seen[id] {
			t.Errorf("operation %s is in idempotentOps but not in the document", id)
		}
	}
}
