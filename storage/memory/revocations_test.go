package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestRevokedTokensContract(t *testing.T) {
	storagetest.RevokedTokens(t, func(*testing.T) storage.RevokedTokens { return NewRevokedTokens() })
}
