package modelcache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/memory"
	"svc/storage/modelcache"
	"svc/storage/storagetest"
)

// countingModels counts the reads that reach the engine; beforeList, when
// set, runs inside ListModels after the engine answered (to interleave a
// write with a load).
type countingModels struct {
	storage.Models
	lists, gets atomic.Int64
	beforeList  func()
}

func (m *countingModels) ListModels(ctx context.Context, tenant string) ([]*storage.Model, error) {
	m.lists.Add(1)
	l, err := m.Models.ListModels(ctx, tenant)
	if m.beforeList != nil {
		m.beforeList()
	}
	return l, err
}

func (m *countingModels) GetModel(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	m.gets.Add(1)
	return m.Models.GetModel(ctx, tenant, key)
}

func TestModelCacheContract(t *testing.T) {
	storagetest.Models(t, func(*testing.T) storage.Models { return modelcache.New(memory.NewModels(), time.Minute) })
}

func TestModelCacheReadsOncePerChange(t *testing.T) {
	ctx := context.Background()
	inner := &countingModels{Models: memory.NewModels()}
	c := modelcache.New(inner, 0)
	k := storage.ModelKey{Name: "orders", Version: 1}
	m := &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED"}
	if err := c.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if got, err := c.GetModel(ctx, "t", k); err != nil || got.State != "UNLOCKED" {
			t.Fatalf("get: %+v %v", got, err)
		}
		if l, err := c.ListModels(ctx, "t"); err != nil || len(l) != 1 {
			t.Fatalf("list: %v %v", l, err)
		}
		if _, err := c.GetModel(ctx, "t", storage.ModelKey{Name: "absent", Version: 1}); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("absent: %v", err)
		}
	}
	if n := inner.lists.Load() + inner.gets.Load(); n != 1 {
		t.Fatalf("%d engine reads for 300 cached reads, want 1", n)
	}
	// A write through the cache is seen by the next read.
	m.State = "LOCKED"
	if err := c.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetModel(ctx, "t", k); got.State != "LOCKED" || got.Revision != 2 {
		t.Fatalf("after write: %+v", got)
	}
	// A conflicting write (stale revision) also drops the entry, so the
	// writer's retry reads the current revision.
	stale := &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED", Revision: 1}
	before := inner.lists.Load()
	if err := c.PutModel(ctx, stale); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale put: %v", err)
	}
	if got, _ := c.GetModel(ctx, "t", k); got.Revision != 2 || inner.lists.Load() != before+1 {
		t.Fatalf("after conflict: %+v, %d loads", got, inner.lists.Load()-before)
	}
	if err := c.DeleteModel(ctx, "t", k); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetModel(ctx, "t", k); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestModelCacheInvalidateAndLease: a write the cache never saw (another
// node's) shows after Invalidate, or after the lease without it.
func TestModelCacheInvalidateAndLease(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewModels()
	c := modelcache.New(inner, time.Minute)
	now := time.Unix(1_000_000, 0)
	c.SetClock(func() time.Time { return now })
	k := storage.ModelKey{Name: "orders", Version: 1}
	var heard []string
	c.OnChange(func(tenant string) { heard = append(heard, tenant) })
	if err := c.PutModel(ctx, &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED"}); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 || heard[0] != "t" {
		t.Fatalf("OnChange heard %v", heard)
	}
	got, _ := c.GetModel(ctx, "t", k)
	// Another node locks the model behind the cache's back.
	got.State = "LOCKED"
	if err := inner.PutModel(ctx, got); err != nil {
		t.Fatal(err)
	}
	if g, _ := c.GetModel(ctx, "t", k); g.State != "UNLOCKED" {
		t.Fatalf("cache did not serve: %s", g.State)
	}
	c.Invalidate("t")
	if g, _ := c.GetModel(ctx, "t", k); g.State != "LOCKED" {
		t.Fatalf("after Invalidate: %s", g.State)
	}
	got.State = "UNLOCKED"
	if err := inner.PutModel(ctx, got); err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Second) // inside the lease less its jitter
	if g, _ := c.GetModel(ctx, "t", k); g.State != "LOCKED" {
		t.Fatalf("lease expired early: %s", g.State)
	}
	now = now.Add(20 * time.Second) // past lease plus jitter
	if g, _ := c.GetModel(ctx, "t", k); g.State != "UNLOCKED" {
		t.Fatalf("after the lease: %s", g.State)
	}
}

// TestModelCacheLoadRacingWrite: a load that read the engine before a
// write and finishes after it must not install what it read.
func TestModelCacheLoadRacingWrite(t *testing.T) {
	ctx := context.Background()
	inner := &countingModels{Models: memory.NewModels()}
	c := modelcache.New(inner, 0)
	k := storage.ModelKey{Name: "orders", Version: 1}
	m := &storage.Model{Tenant: "t", Key: k, State: "UNLOCKED"}
	if err := c.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	inner.beforeList = func() {
		inner.beforeList = nil
		w := *m
		w.State = "LOCKED"
		if err := c.PutModel(ctx, &w); err != nil {
			t.Error(err)
		}
	}
	if g, _ := c.GetModel(ctx, "t", k); g.State != "UNLOCKED" {
		t.Fatalf("the racing read should see what it read: %s", g.State)
	}
	if g, _ := c.GetModel(ctx, "t", k); g.State != "LOCKED" {
		t.Fatalf("the stale load was installed: %s", g.State)
	}
}
