package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

// Unique checks the unique-key claims of a storage.Entities (unique.go):
// a taken value refuses the commit with a *UniqueViolation naming the key
// and leaves nothing written; deletes and key rewrites free values;
// claims are per tenant and model version; of concurrent claimers of one
// value exactly one commits.
func Unique(t *testing.T, newStore func(t *testing.T) storage.Entities) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "person", Version: 1}
	claim := func(v string) []storage.Claim { return []storage.Claim{{Key: "email", Value: []byte(v)}} }
	put := func(s storage.Entities, tenant string, model storage.ModelKey, v string) ([16]byte, error) {
		id := newID(t)
		_, err := s.Commit(ctx, &storage.Tx{Tenant: tenant, ID: newID(t), Writes: []storage.Write{
			{ID: id, Model: model, State: "CREATED", Data: []byte(`{}`), Keyed: true, Claims: claim(v)}}})
		return id, err
	}
	taken := func(t *testing.T, err error, key string) {
		t.Helper()
		var v *storage.UniqueViolation
		if !errors.As(err, &v) || !errors.Is(err, storage.ErrUniqueViolation) || v.Key != key {
			t.Fatalf("want a violation of %q, got %v", key, err)
		}
	}

	t.Run("taken freed by delete and by rewrite", func(t *testing.T) {
		s := newStore(t)
		a, err := put(s, "t1", m, "a@x")
		if err != nil {
			t.Fatal(err)
		}
		b, err := put(s, "t1", m, "a@x")
		taken(t, err, "email")
		if _, err := s.Get(ctx, "t1", b); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("refused create left an entity: %v", err)
		}
		// Other tenant, other model version, other value: free.
		for _, c := range []struct {
			tenant string
			model  storage.ModelKey
			v      string
		}{{"t2", m, "a@x"}, {"t1", storage.ModelKey{Name: "person", Version: 2}, "a@x"}, {"t1", m, "A@x"}} {
			if _, err := put(s, c.tenant, c.model, c.v); err != nil {
				t.Fatalf("%+v: %v", c, err)
			}
		}
		// a rewrites its key: the old value is free, the new one taken.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{
			{ID: a, Model: m, State: "CREATED", Data: []byte(`{}`), ExpectVersion: 1, Keyed: true, Claims: claim("b@x")}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, "t1", m, "b@x"); err == nil {
			t.Fatal("rewritten value not taken")
		}
		c, err := put(s, "t1", m, "a@x")
		if err != nil {
			t.Fatalf("old value not freed: %v", err)
		}
		// A keyed write with no claims (every key unset) frees too.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{
			{ID: a, Model: m, State: "CREATED", Data: []byte(`{}`), ExpectVersion: 2, Keyed: true}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, "t1", m, "b@x"); err != nil {
			t.Fatalf("unset key not freed: %v", err)
		}
		// Delete frees.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{{ID: c, Model: m, Delete: true, ExpectVersion: 1}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, "t1", m, "a@x"); err != nil {
			t.Fatalf("deleted entity's value not freed: %v", err)
		}
		// Delete by model frees every value.
		if _, _, err := s.DeleteModel(ctx, "t1", m, newID(t), "u", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, "t1", m, "a@x"); err != nil {
			t.Fatalf("delete by model did not free: %v", err)
		}
	})

	t.Run("one transaction", func(t *testing.T) {
		s := newStore(t)
		w := func(v string) storage.Write {
			return storage.Write{ID: newID(t), Model: m, State: "CREATED", Data: []byte(`{}`), Keyed: true, Claims: claim(v)}
		}
		_, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{w("x"), w("y"), w("x")}})
		taken(t, err, "email")
		if n, _ := s.Count(ctx, "t1", m); n != 0 {
			t.Fatalf("a refused chunk wrote %d entities", n)
		}
		a, b := w("x"), w("y")
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{a, b}}); err != nil {
			t.Fatal(err)
		}
		// Two entities swap their values in one transaction.
		a.ExpectVersion, b.ExpectVersion = 1, 1
		a.Claims, b.Claims = claim("y"), claim("x")
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{a, b}}); err != nil {
			t.Fatalf("swap: %v", err)
		}
		// A write of a model without keys leaves claims alone.
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t1", ID: newID(t), Writes: []storage.Write{
			{ID: a.ID, Model: m, State: "CREATED", Data: []byte(`{}`), ExpectVersion: 2}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, "t1", m, "y"); err == nil {
			t.Fatal("an unkeyed write freed claims")
		}
	})

	t.Run("concurrent claimers", func(t *testing.T) {
		s := newStore(t)
		for round := 0; round < 10; round++ {
			v := uuid.NewString()
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = put(s, "t1", m, v)
				}()
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, storage.ErrUniqueViolation):
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d winners", round, won)
			}
		}
	})
}
