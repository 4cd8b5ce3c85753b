package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestAuditContract(t *testing.T) {
	storagetest.Audit(t, func(*testing.T) (storage.Entities, storage.Audits) {
		s := NewEntities()
		return s, s.Audits()
	})
}
