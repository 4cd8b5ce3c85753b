package modelcache

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"svc/storage"
)

// Cache is a storage.Models that keeps each tenant's models in process, so
// that GET {ctx}/model/ and the model read of every entity write cost no
// database round trip (issue 14: on PostgreSQL a single create read its
// model twice, and the model list was a query per request).
//
// A tenant's models are loaded whole by one ListModels on first use and
// then serve GetModel and ListModels until:
//   - this process writes a model of the tenant (PutModel, DeleteModel,
//     successful or not: a conflict means the cache was behind);
//   - Invalidate is called for the tenant — the hook a cluster
//     notification ("another node changed tenant T's models") calls;
//   - the lease passes (jittered ±10 %), the safety net for a writer this
//     process never hears of. 0 keeps entries until invalidated.
//
// A load that raced with a write is never installed: every invalidation
// advances the tenant's generation, and a load installs its result only
// if the generation it started under is still current.
type Cache struct {
	inner   storage.Models
	lease   time.Duration
	now     func() time.Time
	tenants sync.Map // tenant → *tenantModels
	// onChange, when set, hears of every local model write (after it).
	onChange atomic.Pointer[func(tenant string)]
}

type tenantModels struct {
	mu   sync.Mutex // serialises installs against invalidations
	gen  atomic.Uint64
	snap atomic.Pointer[modelSnapshot]
}

type modelSnapshot struct {
	list    []*storage.Model // sorted by name, version (ListModels' order)
	byKey   map[storage.ModelKey]*storage.Model
	expires time.Time // zero: no lease
}

// New caches inner's models with the given lease.
func New(inner storage.Models, lease time.Duration) *Cache {
	return &Cache{inner: inner, lease: lease, now: time.Now}
}

// OnChange registers fn to hear of every model write this process makes
// (for a cluster to tell the other nodes); nil removes it.
func (c *Cache) OnChange(fn func(tenant string)) {
	if fn == nil {
		c.onChange.Store(nil)
		return
	}
	c.onChange.Store(&fn)
}

// Invalidate drops tenant's cached models; the next read loads them again.
func (c *Cache) Invalidate(tenant string) {
	t := c.slot(tenant)
	t.mu.Lock()
	t.gen.Add(1)
	t.snap.Store(nil)
	t.mu.Unlock()
}

func (c *Cache) slot(tenant string) *tenantModels {
	if v, ok := c.tenants.Load(tenant); ok {
		return v.(*tenantModels)
	}
	v, _ := c.tenants.LoadOrStore(tenant, &tenantModels{})
	return v.(*tenantModels)
}

// snapshot returns tenant's live cached models, loading them if needed.
func (c *Cache) snapshot(ctx context.Context, tenant string) (*modelSnapshot, error) {
	t := c.slot(tenant)
	if s := t.snap.Load(); s != nil && (s.expires.IsZero() || c.now().Before(s.expires)) {
		return s, nil
	}
	gen := t.gen.Load()
	list, err := c.inner.ListModels(ctx, tenant)
	if err != nil {
		return nil, err
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].Key, list[j].Key
		return a.Name < b.Name || (a.Name == b.Name && a.Version < b.Version)
	})
	s := &modelSnapshot{list: list, byKey: make(map[storage.ModelKey]*storage.Model, len(list))}
	for _, m := range list {
		s.byKey[m.Key] = m
	}
	if c.lease > 0 {
		jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(c.lease))
		s.expires = c.now().Add(c.lease + jitter)
	}
	t.mu.Lock()
	if t.gen.Load() == gen {
		t.snap.Store(s)
	}
	t.mu.Unlock()
	// Even when a write overtook the load, the caller gets what it read:
	// a read that began before the write may see the state before it.
	return s, nil
}

// GetModel returns the cached model (a copy of the record; its byte slices
// are shared, as the Models contract allows).
func (c *Cache) GetModel(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	s, err := c.snapshot(ctx, tenant)
	if err != nil {
		return nil, err
	}
	m, ok := s.byKey[key]
	if !ok {
		return nil, storage.ErrNotFound
	}
	cp := *m
	return &cp, nil
}

// ListModels returns copies of the cached records, sorted by name and
// version.
func (c *Cache) ListModels(ctx context.Context, tenant string) ([]*storage.Model, error) {
	s, err := c.snapshot(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]*storage.Model, len(s.list))
	recs := make([]storage.Model, len(s.list))
	for i, m := range s.list {
		recs[i] = *m
		out[i] = &recs[i]
	}
	return out, nil
}

// PutModel writes through and drops the tenant's cached models.
func (c *Cache) PutModel(ctx context.Context, m *storage.Model) error {
	err := c.inner.PutModel(ctx, m)
	c.changed(m.Tenant)
	return err
}

// DeleteModel deletes through and drops the tenant's cached models.
func (c *Cache) DeleteModel(ctx context.Context, tenant string, key storage.ModelKey) error {
	err := c.inner.DeleteModel(ctx, tenant, key)
	c.changed(tenant)
	return err
}

func (c *Cache) changed(tenant string) {
	c.Invalidate(tenant)
	if fn := c.onChange.Load(); fn != nil {
		(*fn)(tenant)
	}
}
