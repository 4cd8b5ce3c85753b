package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestEntitiesContract(t *testing.T) {
	db := openTest(t)
	storagetest.Entities(t, func(t *testing.T) storage.Entities {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE entities, entity_revisions"); err != nil {
			t.Fatal(err)
		}
		return db.Entities()
	})
}
