package postgres

import (
	"context"
	"testing"
	"time"

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

// The pool settings the entity path depends on (SVC_POSTGRES_MAX_CONNS,
// MIN_CONNS, MAX_CONN_IDLE_TIME) reach the pgx pool.
func TestPoolSettingsApplied(t *testing.T) {
	o := testOptions()
	o.MaxConns, o.MinConns, o.MaxConnIdleTime = 3, 1, 7*time.Second
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := db.pool.Config()
	if c.MaxConns != 3 || c.MinConns != 1 || c.MaxConnIdleTime != 7*time.Second {
		t.Fatalf("pool max %d min %d idle %v", c.MaxConns, c.MinConns, c.MaxConnIdleTime)
	}
}

func TestUniqueContract(t *testing.T) {
	db := openTest(t)
	storagetest.Unique(t, func(t *testing.T) storage.Entities {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE entities, entity_revisions, unique_claims"); err != nil {
			t.Fatal(err)
		}
		return db.Entities()
	})
}
