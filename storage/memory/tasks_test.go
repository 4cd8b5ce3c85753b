package memory

import (
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestTasksContract(t *testing.T) {
	storagetest.Tasks(t, func(*testing.T) (storage.Entities, storage.ScheduledTasks) {
		s := NewEntities()
		return s, s.Tasks()
	})
}

func BenchmarkCreateArmed(b *testing.B) { storagetest.BenchCreateArmed(b, NewEntities()) }
