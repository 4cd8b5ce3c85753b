package main

import (
	"sync/atomic"
	"time"
)

// readyTTL is how long one storage probe answers {ctx}/health and /readyz.
// Probing per request made PostgreSQL do a round trip for every health
// check (17 k/s kept the database 50–60 % busy, issue 14); a second of
// staleness is far below any orchestrator's probe period.
const readyTTL = time.Second

// cachedReady answers from the last probe while it is younger than ttl.
// When it is older, one caller probes again while the others keep the
// previous answer, so a slow or hanging database never queues the health
// checks behind it.
type cachedReady struct {
	probe   func() bool
	ttl     time.Duration
	now     func() time.Time
	last    atomic.Pointer[readyResult]
	probing atomic.Bool
}

type readyResult struct {
	ok bool
	at time.Time
}

func newCachedReady(probe func() bool, ttl time.Duration) *cachedReady {
	return &cachedReady{probe: probe, ttl: ttl, now: time.Now}
}

// Ready reports the storage state as of at most ttl ago (on the first
// call, now).
func (c *cachedReady) Ready() bool {
	r := c.last.Load()
	if r != nil && c.now().Sub(r.at) < c.ttl {
		return r.ok
	}
	if !c.probing.CompareAndSwap(false, true) {
		if r != nil {
			return r.ok
		}
		// The very first probe is still running: ask on our own.
		return c.probe()
	}
	defer c.probing.Store(false)
	ok := c.probe()
	c.last.Store(&readyResult{ok: ok, at: c.now()})
	return ok
}
