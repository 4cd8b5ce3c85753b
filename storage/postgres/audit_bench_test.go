package postgres

import (
	"context"
	"testing"

	"svc/storage/storagetest"
)

func BenchmarkCreateAudit(b *testing.B) {
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storagetest.BenchCreateAudit(b, db.Entities())
}

func BenchmarkEntityAudit(b *testing.B) {
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storagetest.BenchEntityAudit(b, db.Entities(), db.Audits())
}
