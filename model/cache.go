package model

import (
	"sync"

	"svc/storage"
)

type cacheKey struct {
	tenant string
	key    storage.ModelKey
}

// parsedCache keeps the last decoded schema of each model with the
// revision it was decoded from, so Admit decodes a model's SIMPLE_VIEW once
// per revision instead of once per entity write. A stale entry is never
// used: every lookup compares the stored revision just read.
type parsedCache struct{ m sync.Map } // cacheKey → *parsed

func (c *parsedCache) forget(tenant string, key storage.ModelKey) {
	c.m.Delete(cacheKey{tenant, key})
}

// advance carries a cached model over a write that left the schema as it
// was (lock, unlock, change level, unique keys), so the model decoded or
// built before the write keeps serving.
func (c *parsedCache) advance(tenant string, key storage.ModelKey, from, to int64) {
	ck := cacheKey{tenant, key}
	if v, ok := c.m.Load(ck); ok && v.(*parsed).rev == from {
		p := v.(*parsed)
		c.m.CompareAndSwap(ck, v, &parsed{rev: to, model: p.model, expires: p.expires})
	}
}
