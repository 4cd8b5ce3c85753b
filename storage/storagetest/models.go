// Package storagetest is the contract every storage engine must pass. Each
// engine's tests call these functions with a fresh store.
package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"svc/storage"
)

// Models checks a storage.Models implementation.
func Models(t *testing.T, newStore func(t *testing.T) storage.Models) {
	ctx := context.Background()
	t.Run("create get list delete", func(t *testing.T) {
		s := newStore(t)
		k := storage.ModelKey{Name: "order", Version: 1}
		if _, err := s.GetModel(ctx, "t1", k); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("get absent: %v", err)
		}
		m := &storage.Model{Tenant: "t1", Key: k, State: "UNLOCKED", Schema: []byte(`{"$":{}}`)}
		if err := s.PutModel(ctx, m); err != nil {
			t.Fatal(err)
		}
		if m.Revision != 1 || m.CreatedAt.IsZero() {
			t.Fatalf("after create: revision %d created %v", m.Revision, m.CreatedAt)
		}
		got, err := s.GetModel(ctx, "t1", k)
		if err != nil || string(got.Schema) != `{"$":{}}` || got.State != "UNLOCKED" || got.Revision != 1 {
			t.Fatalf("get: %+v %v", got, err)
		}
		// The record is the caller's: editing it (and replacing its
		// slices, the only way the contract allows) leaves the store as it was.
		got.State, got.Schema = "LOCKED", []byte(`{"$":{"x":"STRING"}}`)
		again, _ := s.GetModel(ctx, "t1", k)
		if string(again.Schema) != `{"$":{}}` || again.State != "UNLOCKED" {
			t.Fatal("editing a returned record changed the store")
		}
		// PutModel keeps its own copy: writing into the caller's buffer
		// after the put changes nothing stored.
		buf := []byte(`{"$":{"y":"STRING"}}`)
		m2 := &storage.Model{Tenant: "t1", Key: storage.ModelKey{Name: "alias", Version: 1}, State: "UNLOCKED", Schema: buf}
		if err := s.PutModel(ctx, m2); err != nil {
			t.Fatal(err)
		}
		buf[2] = 'X'
		if again, _ := s.GetModel(ctx, "t1", m2.Key); string(again.Schema) != `{"$":{"y":"STRING"}}` {
			t.Fatal("store aliases the buffer it was given")
		}
		s.DeleteModel(ctx, "t1", m2.Key)
		s.PutModel(ctx, &storage.Model{Tenant: "t1", Key: storage.ModelKey{Name: "a", Version: 2}, State: "LOCKED"})
		list, err := s.ListModels(ctx, "t1")
		if err != nil || len(list) != 2 || list[0].Key.Name != "a" || list[1].Key.Name != "order" {
			t.Fatalf("list: %v %v", list, err)
		}
		if err := s.DeleteModel(ctx, "t1", k); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteModel(ctx, "t1", k); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})
	t.Run("tenant isolation", func(t *testing.T) {
		s := newStore(t)
		k := storage.ModelKey{Name: "secret", Version: 1}
		s.PutModel(ctx, &storage.Model{Tenant: "A", Key: k, State: "UNLOCKED"})
		if _, err := s.GetModel(ctx, "B", k); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B reads A's model: %v", err)
		}
		if l, _ := s.ListModels(ctx, "B"); len(l) != 0 {
			t.Errorf("B lists A's models: %d", len(l))
		}
		if err := s.DeleteModel(ctx, "B", k); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("B deletes A's model: %v", err)
		}
		if err := s.PutModel(ctx, &storage.Model{Tenant: "B", Key: k, State: "LOCKED"}); err != nil {
			t.Errorf("B cannot create its own model of the same name: %v", err)
		}
		if a, _ := s.GetModel(ctx, "A", k); a == nil || a.State != "UNLOCKED" {
			t.Errorf("B's write changed A's model: %+v", a)
		}
	})
	t.Run("optimistic concurrency", func(t *testing.T) {
		s := newStore(t)
		k := storage.ModelKey{Name: "c", Version: 1}
		if err := s.PutModel(ctx, &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED"}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutModel(ctx, &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED"}); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("second create: %v", err)
		}
		var wg sync.WaitGroup
		var wins, conflicts int
		var mu sync.Mutex
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := s.GetModel(ctx, "t", k)
				if err != nil {
					t.Error(err)
					return
				}
				m.ChangeLevel = "TYPE"
				err = s.PutModel(ctx, m)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, storage.ErrConflict):
					conflicts++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		final, _ := s.GetModel(ctx, "t", k)
		if wins < 1 || int64(wins)+1 != final.Revision {
			t.Fatalf("wins %d conflicts %d final revision %d", wins, conflicts, final.Revision)
		}
	})
}
