package workflow

import "sync"

// SetCache keeps compiled workflow sets per model revision, so a create
// does not decode and compile the model's workflows every time. A model
// write advances storage.Model.Revision, which misses the cache and
// recompiles. Safe for concurrent use.
type SetCache struct {
	mu      sync.RWMutex
	max     int
	entries map[cacheKey]cacheEntry
}

// cacheKey is a struct, not a joined string, so a hit allocates nothing.
type cacheKey struct {
	tenant, model string
	version       int
}

type cacheEntry struct {
	created  int64
	revision int64
	set      *Set
}

// NewSetCache holds at most max models (0 means 1024).
func NewSetCache(max int) *SetCache {
	if max <= 0 {
		max = 1024
	}
	return &SetCache{max: max, entries: make(map[cacheKey]cacheEntry)}
}

// Get returns the compiled set of a model's stored workflows at revision,
// compiling stored on a miss.
func (c *SetCache) Get(tenant, model string, version int, revision int64, stored []byte) (*Set, error) {
	return c.GetCreated(tenant, model, version, 0, revision, stored)
}

// GetCreated is Get for a model identified also by its creation instant
// (storage.Model.CreatedAt in Unix nanoseconds): a model deleted and
// created again restarts its revisions, so the revision alone could match
// the compiled set of its predecessor.
func (c *SetCache) GetCreated(tenant, model string, version int, created, revision int64, stored []byte) (*Set, error) {
	key := cacheKey{tenant, model, version}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if ok && e.revision == revision && e.created == created {
		return e.set, nil
	}
	set, err := CompileStored(stored)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if _, present := c.entries[key]; !present && len(c.entries) >= c.max {
		for k := range c.entries { // evict an arbitrary entry
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = cacheEntry{created: created, revision: revision, set: set}
	c.mu.Unlock()
	return set, nil
}

// Forget drops a model, e.g. when it is deleted.
func (c *SetCache) Forget(tenant, model string, version int) {
	c.mu.Lock()
	delete(c.entries, cacheKey{tenant, model, version})
	c.mu.Unlock()
}
