package entity

import (
	"context"
	"errors"
	"testing"
	"time"

	"svc/model"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
)

// racingStore lets a writer commit between deleteWhere's selection and its
// transaction.
type racingStore struct {
	*memory.Entities
	afterScan func()
}

func (r *racingStore) Scan(ctx context.Context, tenant string, key storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	if err := r.Entities.Scan(ctx, tenant, key, at, fn); err != nil {
		return err
	}
	if r.afterScan != nil {
		r.afterScan()
	}
	return nil
}

// TestDeleteWhereConflict: a matched entity that another writer changes
// after the selection makes the conditional delete fail with ErrConflict
// (409 CONFLICT) and delete nothing, not even the untouched matches.
func TestDeleteWhereConflict(t *testing.T) {
	ctx := context.Background()
	ms, mem := memory.NewModels(), memory.NewEntities()
	es := &racingStore{Entities: mem}
	key := storage.ModelKey{Name: "pet", Version: 1}
	if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED",
		Schema: []byte(`{"$":{".age":"INTEGER"}}`)}); err != nil {
		t.Fatal(err)
	}
	msvc := model.New(ms, nil)
	svc := New(es, ms, GateOf(msvc), WithConditions(search.New(ms, memory.NewSearch(mem), memory.NewSearchJobs(), search.Options{})))
	a := Actor{Tenant: "A", User: "u"}
	var ids [][16]byte
	for _, doc := range []string{`{"age":7}`, `{"age":8}`} {
		res, err := svc.Create(ctx, a, key, "JSON", []byte(doc), 10)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Chunks[0].IDs[0])
	}
	es.afterScan = func() {
		es.afterScan = nil
		if _, err := svc.Update(ctx, a, ids[0], "JSON", []byte(`{"age":9}`), "", ""); err != nil {
			t.Errorf("racing update: %v", err)
		}
	}
	cond := []byte(`{"type":"simple","jsonPath":"$.age","operatorType":"GREATER_THAN","value":5}`)
	if _, err := svc.DeleteByModel(ctx, a, key, cond, nil); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("delete racing an update: %v, want ErrConflict", err)
	}
	if n, _ := mem.Count(ctx, "A", key); n != 2 {
		t.Fatalf("%d entities left after a failed delete, want 2", n)
	}
	// Retried, it deletes both.
	d, err := svc.DeleteByModel(ctx, a, key, cond, nil)
	if err != nil || d.Matched != 2 || d.Removed != 2 {
		t.Fatalf("retry: %+v %v", d, err)
	}
}
