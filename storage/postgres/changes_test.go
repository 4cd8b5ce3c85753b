package postgres

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestChangesContract(t *testing.T) {
	db := openTest(t)
	storagetest.Changes(t, func(*testing.T) (storage.Entities, storage.ChangeLog) { return db.Entities(), db.Changes() })
}

func TestSubscriptionsContract(t *testing.T) {
	db := openTest(t)
	storagetest.SubscriptionStore(t, func(*testing.T) storage.Subscriptions { return db.Subscriptions() })
}

func TestIdempotencyKeysContract(t *testing.T) {
	db := openTest(t)
	storagetest.IdempotencyKeys(t, func(*testing.T) (storage.Entities, storage.IdempotencyKeys) {
		return db.Entities(), db.IdempotencyKeys()
	})
}
