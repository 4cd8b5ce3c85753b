package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestSearchJobs(t *testing.T) {
	storagetest.SearchJobs(t, func(*testing.T) storage.SearchJobs { return NewSearchJobs() })
}

func TestMessages(t *testing.T) {
	storagetest.Messages(t, func(*testing.T) storage.Messages { return NewMessages() })
}
