package storage

import "time"

// SetClock replaces the cache's clock (tests of the lease).
func (c *ModelCache) SetClock(now func() time.Time) { c.now = now }
