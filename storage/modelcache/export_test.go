package modelcache

import "time"

// SetClock replaces the cache's clock (tests of the lease).
func (c *Cache) SetClock(now func() time.Time) { c.now = now }
