package federation

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// reconcileHealth tracks the last successful refresh of a verification
// cache on the monotonic clock. A cache not refreshed for ten intervals is
// stale and verification through it fails closed: a node cut off from the
// database must not keep honouring keys an administrator revoked.
type reconcileHealth struct {
	interval time.Duration
	start    time.Time
	lastOK   atomic.Int64 // time.Since(start) at the last success, ns
}

func (h *reconcileHealth) init(interval time.Duration) {
	h.interval = interval
	h.start = time.Now()
	h.lastOK.Store(0)
}

func (h *reconcileHealth) succeeded() { h.lastOK.Store(int64(time.Since(h.start))) }

func (h *reconcileHealth) stale() bool {
	if h.interval <= 0 {
		return false
	}
	return time.Since(h.start)-time.Duration(h.lastOK.Load()) > 10*h.interval
}

// jittered is interval × a random factor in [0.9, 1.1], so nodes started
// together do not hit the database in lockstep.
func jittered(interval time.Duration) time.Duration {
	return time.Duration(float64(interval) * (0.9 + 0.2*rand.Float64()))
}

// reconcileLoop calls refresh every jittered interval until ctx ends. A
// failure keeps the previous snapshot and is logged.
func reconcileLoop(ctx context.Context, interval time.Duration, log *slog.Logger, what string, refresh func(context.Context) error) {
	if interval <= 0 {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTimer(jittered(interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, interval)
		if err := refresh(rctx); err != nil && ctx.Err() == nil {
			log.Error("auth cache reconcile failed; keeping the previous copy", "cache", what, "err", err)
		}
		cancel()
		t.Reset(jittered(interval))
	}
}

// changeHook is called after a refresh whose snapshot differs from the
// previous one, so caches built on top (authcache's verified tokens) drop
// entries a revocation made invalid.
type changeHook struct {
	fn   atomic.Pointer[func()]
	last atomic.Uint64 // fingerprint of the last snapshot
}

func (h *changeHook) set(fn func()) { h.fn.Store(&fn) }

// observe records fp and fires the hook when it changed.
func (h *changeHook) observe(fp uint64) {
	if h.last.Swap(fp) == fp {
		return
	}
	if fn := h.fn.Load(); fn != nil && *fn != nil {
		(*fn)()
	}
}
