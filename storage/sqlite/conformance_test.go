package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/storagetest"
)

// openTest opens a fresh engine on a file in the test's temporary
// directory, closed when the test ends.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), testOptions(filepath.Join(t.TempDir(), "svc.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func testOptions(path string) Options {
	return Options{Path: path, AutoMigrate: true, BusyTimeout: 5 * time.Second, CacheSizeKiB: 8000, SearchScanLimit: 100000}
}

func TestEntitiesContract(t *testing.T) {
	t.Parallel()
	storagetest.Entities(t, func(t *testing.T) storage.Entities { return openTest(t).Entities() })
}

func TestUniqueContract(t *testing.T) {
	t.Parallel()
	storagetest.Unique(t, func(t *testing.T) storage.Entities { return openTest(t).Entities() })
}

func TestAuditContract(t *testing.T) {
	t.Parallel()
	storagetest.Audit(t, func(t *testing.T) (storage.Entities, storage.Audits) {
		db := openTest(t)
		return db.Entities(), db.Audits()
	})
}

func TestTasksContract(t *testing.T) {
	t.Parallel()
	storagetest.Tasks(t, func(t *testing.T) (storage.Entities, storage.ScheduledTasks) {
		db := openTest(t)
		return db.Entities(), db.Tasks()
	})
}

func TestModelsContract(t *testing.T) {
	t.Parallel()
	storagetest.Models(t, func(t *testing.T) storage.Models { return openTest(t).Models() })
}

func TestIAMContract(t *testing.T) {
	t.Parallel()
	storagetest.IAM(t, func(t *testing.T) storage.IAMStores { return openTest(t).IAMStores() })
}

func TestIAMFederationContract(t *testing.T) {
	t.Parallel()
	storagetest.IAMFederation(t, func(t *testing.T) storage.IAMStores { return openTest(t).IAMStores() })
}

func TestRevokedTokensContract(t *testing.T) {
	t.Parallel()
	storagetest.RevokedTokens(t, func(t *testing.T) storage.RevokedTokens { return openTest(t).RevokedTokens() })
}

func TestSearchJobsContract(t *testing.T) {
	t.Parallel()
	storagetest.SearchJobs(t, func(t *testing.T) storage.SearchJobs { return openTest(t).SearchJobs() })
}

func TestMessagesContract(t *testing.T) {
	t.Parallel()
	storagetest.Messages(t, func(t *testing.T) storage.Messages { return openTest(t).Messages() })
}

func TestChangesContract(t *testing.T) {
	t.Parallel()
	storagetest.Changes(t, func(t *testing.T) (storage.Entities, storage.ChangeLog) {
		db := openTest(t)
		return db.Entities(), db.Changes()
	})
}

func TestSubscriptionsContract(t *testing.T) {
	t.Parallel()
	storagetest.SubscriptionStore(t, func(t *testing.T) storage.Subscriptions { return openTest(t).Subscriptions() })
}

func TestIdempotencyKeysContract(t *testing.T) {
	t.Parallel()
	storagetest.IdempotencyKeys(t, func(t *testing.T) (storage.Entities, storage.IdempotencyKeys) {
		db := openTest(t)
		return db.Entities(), db.IdempotencyKeys()
	})
}
