package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestTasksContract(t *testing.T) {
	db := openTest(t)
	storagetest.Tasks(t, func(t *testing.T) (storage.Entities, storage.ScheduledTasks) {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE entities, entity_revisions, audit_events, scheduled_tasks"); err != nil {
			t.Fatal(err)
		}
		return db.Entities(), db.Tasks()
	})
}

func BenchmarkCreateArmed(b *testing.B) {
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storagetest.BenchCreateArmed(b, db.Entities())
}

// Both single-create statements carry the task insert: a change to their
// shape must not silently drop arming to an empty statement.
func TestSingleCreateArmedStatements(t *testing.T) {
	for _, sql := range []string{insertOneArmed, insertOneAuditedArmed} {
		if sql == "" {
			t.Fatal("a single-create statement lost its task insert")
		}
	}
}
