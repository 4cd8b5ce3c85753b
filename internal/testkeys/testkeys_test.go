package testkeys

import "testing"

// TestKeysDistinctAndValid: every key parses, validates and differs from
// the others, which is what tests that need distinct keys rely on.
func TestKeysDistinctAndValid(t *testing.T) {
	seen := map[string]int{}
	for i := range N {
		k := RSA(i)
		if err := k.Validate(); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if k.N.BitLen() != 2048 {
			t.Fatalf("key %d: %d bits, want 2048", i, k.N.BitLen())
		}
		if j, ok := seen[k.N.String()]; ok {
			t.Fatalf("keys %d and %d are the same", j, i)
		}
		seen[k.N.String()] = i
	}
}
