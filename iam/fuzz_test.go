package iam

import (
	"context"
	"testing"
)

// FuzzParseArgon2id: any stored form either parses with costs inside the
// bounds or is refused; a refused form never matches a secret.
func FuzzParseArgon2id(f *testing.F) {
	f.Add([]byte(hashOperatorSecret("demo-secret", cheap)))
	f.Add([]byte("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"))
	f.Add([]byte("$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"))
	f.Add(HashSecret("legacy"))
	f.Fuzz(func(t *testing.T, stored []byte) {
		h, err := parseArgon2id(stored)
		if err != nil {
			if ok, _ := argon2Matches(context.Background(), stored, "demo-secret"); ok {
				t.Fatalf("refused form %q matched", stored)
			}
			return
		}
		p := h.p
		if p.Time < 1 || p.Time > maxArgon2Time || p.Threads < 1 || p.Threads > maxArgon2Threads ||
			p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > maxArgon2MemoryKiB || len(h.key) < 16 || len(h.salt) < 8 {
			t.Fatalf("accepted out-of-bounds form %q: %+v", stored, p)
		}
	})
}
