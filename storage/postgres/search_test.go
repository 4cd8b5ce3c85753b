package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestSearchJobs(t *testing.T) {
	db := openTest(t)
	storagetest.SearchJobs(t, func(t *testing.T) storage.SearchJobs {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE search_jobs CASCADE"); err != nil {
			t.Fatal(err)
		}
		return db.SearchJobs()
	})
}

func TestMessages(t *testing.T) {
	db := openTest(t)
	storagetest.Messages(t, func(t *testing.T) storage.Messages {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE messages"); err != nil {
			t.Fatal(err)
		}
		return db.Messages()
	})
}
