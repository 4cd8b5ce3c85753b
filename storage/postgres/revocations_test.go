package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestRevokedTokensContract(t *testing.T) {
	db := openTest(t)
	storagetest.RevokedTokens(t, func(t *testing.T) storage.RevokedTokens {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE iam_revoked_token"); err != nil {
			t.Fatal(err)
		}
		return db.RevokedTokens()
	})
}
