package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestAuditContract(t *testing.T) {
	db := openTest(t)
	storagetest.Audit(t, func(t *testing.T) (storage.Entities, storage.Audits) {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE entities, entity_revisions, audit_events"); err != nil {
			t.Fatal(err)
		}
		return db.Entities(), db.Audits()
	})
}
