package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestModelsContract(t *testing.T) {
	storagetest.Models(t, func(*testing.T) storage.Models { return NewModels() })
}
