package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestEntitiesContract(t *testing.T) {
	storagetest.Entities(t, func(*testing.T) storage.Entities { return NewEntities() })
}

func TestUniqueContract(t *testing.T) {
	storagetest.Unique(t, func(*testing.T) storage.Entities { return NewEntities() })
}

func TestIdempotencyKeysContract(t *testing.T) {
	storagetest.IdempotencyKeys(t, func(*testing.T) (storage.Entities, storage.IdempotencyKeys) {
		s := NewEntities()
		return s, s.Keys()
	})
}
