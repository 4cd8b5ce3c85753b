package memory

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestEntitiesContract(t *testing.T) {
	storagetest.Entities(t, func(*testing.T) storage.Entities { return NewEntities() })
}

func TestUniqueContract(t *testing.T) {
	storagetest.Unique(t, func(*testing.T) storage.Entities { return NewEntities() })
}

func TestIdempotencyKeysContract(t *testing.T) {
	storagetest.IdempotencyKeys(t, func(*testing.T) (storage.Entities, storage.IdempotencyKeys) {
		s := NewEntities()
		return s, s.Keys()
	})
}

// TestAttributedGetOneAllocation: a read of an attributed revision hands
// out its own copy of the attribution (changing it changes no later read)
// and allocates no more than a read of an unattributed one.
func TestAttributedGetOneAllocation(t *testing.T) {
	s := NewEntities()
	ctx := context.Background()
	plain, attributed := [16]byte{1}, [16]byte{2}
	m := storage.ModelKey{Name: "m", Version: 1}
	for _, tx := range []*storage.Tx{
		{Tenant: "t", ID: [16]byte{9}, Writes: []storage.Write{{ID: plain, Model: m, State: "NEW", Data: []byte(`{"a":1}`)}}},
		{Tenant: "t", ID: [16]byte{10}, Attribution: &storage.Attribution{UserKind: "user", ExecID: "x", ExecKind: "service"},
			Writes: []storage.Write{{ID: attributed, Model: m, State: "NEW", Data: []byte(`{"a":1}`)}}},
	} {
		if _, err := s.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	e, err := s.Get(ctx, "t", attributed)
	if err != nil {
		t.Fatal(err)
	}
	if e.Attribution == nil || *e.Attribution != (storage.Attribution{UserKind: "user", ExecID: "x", ExecKind: "service"}) {
		t.Fatalf("attribution %+v", e.Attribution)
	}
	e.Attribution.ExecID = "changed"
	if again, _ := s.Get(ctx, "t", attributed); again.Attribution.ExecID != "x" {
		t.Fatalf("a caller's change reached the store: %+v", again.Attribution)
	}
	if testing.Short() {
		return
	}
	get := func(id [16]byte) func() {
		return func() {
			if _, err := s.Get(ctx, "t", id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, p := testing.AllocsPerRun(100, get(attributed)), testing.AllocsPerRun(100, get(plain)); a != p {
		t.Errorf("attributed Get: %v allocations, unattributed: %v", a, p)
	}
}
