package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestIAMFederationContract(t *testing.T) {
	storagetest.IAMFederation(t, func(*testing.T) storage.IAMStores { return NewIAMStores() })
}
