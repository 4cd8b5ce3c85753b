package iam

import (
	"context"
	"testing"

	"svc/storage/memory"
)

// BenchmarkClientAuthenticate: a generated secret (SHA-256), an operator
// secret answered by the verified-secret cache, and the same secret with
// the cache bypassed (one Argon2id verification at the default cost, what
// the first request after start pays).
func BenchmarkClientAuthenticate(b *testing.B) {
	ctx := context.Background()
	c := NewClients(memory.NewIAMStores().Clients, false)
	cr, err := c.Create(ctx, "t1", false)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.EnsureBootstrap(ctx, "ops", "demo-secret", "t1", "admin", []string{RoleAdmin}); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, id, secret string, before func()) {
		b.ReportAllocs()
		for b.Loop() {
			if before != nil {
				before()
			}
			if _, err := c.Authenticate(ctx, id, secret); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("generated-sha256", func(b *testing.B) { run(b, cr.ClientID, cr.Secret, nil) })
	b.Run("operator-cached", func(b *testing.B) { run(b, "ops", "demo-secret", nil) })
	b.Run("operator-argon2id", func(b *testing.B) {
		run(b, "ops", "demo-secret", func() { c.verified = newVerifiedSecrets(maxVerifiedSecrets) })
	})
}
