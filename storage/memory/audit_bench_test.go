package memory

import (
	"testing"

	"svc/storage/storagetest"
)

func BenchmarkCreateAudit(b *testing.B) { storagetest.BenchCreateAudit(b, NewEntities()) }

func BenchmarkEntityAudit(b *testing.B) {
	s := NewEntities()
	storagetest.BenchEntityAudit(b, s, s.Audits())
}
