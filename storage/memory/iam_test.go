package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestIAMContract(t *testing.T) {
	storagetest.IAM(t, func(*testing.T) storage.IAMStores { return NewIAMStores() })
}
