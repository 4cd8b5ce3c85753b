package authcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"svc/iam"
	"svc/storage"
)

// ErrRevoked: the token's jti was revoked (RFC 7009). Callers answer it
// like every other verification failure.
var ErrRevoked = errors.New("authcache: token revoked")

// ErrNotRevocable: the token is not one svc signed, or carries no jti.
var ErrNotRevocable = errors.New("authcache: token cannot be revoked")

// revokedSet maps a revoked jti to the unix-nanosecond instant after which
// the token could no longer verify anyway. It is never modified once
// published: writers copy it.
type revokedSet map[string]int64

// isRevoked is the hot path's check: one atomic load while nothing is
// revoked, one map probe otherwise; neither allocates.
func (c *Cache) isRevoked(jti string) bool {
	rs := c.revoked.Load()
	if rs == nil || jti == "" {
		return false
	}
	_, ok := (*rs)[jti]
	return ok
}

// TokenInfo is what the token endpoint's companions (introspection,
// revocation) need of a verified token beyond its principal.
type TokenInfo struct {
	JTI string
	// Own: svc signed the token (only those can be revoked).
	Own bool
	// Until is the last instant the token verifies (exp plus leeway).
	Until time.Time
}

// Inspect verifies token through the whole chain, as Verify does (from the
// verified-token cache when it can), and also returns its TokenInfo. A
// revoked token fails with ErrRevoked.
func (c *Cache) Inspect(ctx context.Context, token []byte) (*iam.Principal, *TokenInfo, error) {
	now := c.now()
	if c.Stale(now) {
		return nil, nil, ErrStale
	}
	e, err := c.lookup(ctx, token, now.UnixNano())
	if err != nil {
		return nil, nil, err
	}
	return e.p, &TokenInfo{JTI: e.jti, Own: e.own, Until: e.exp}, nil
}

// Revoke records the revocation of an own token's jti in storage (so every
// node and every restart honours it) and refuses the jti on this node at
// once; other nodes pick it up on their next reconcile.
func (c *Cache) Revoke(ctx context.Context, r *storage.RevokedToken) error {
	if c.opt.Revocations == nil {
		return errors.New("authcache: no revocation store")
	}
	if r.JTI == "" {
		return ErrNotRevocable
	}
	if err := c.opt.Revocations.RevokeToken(ctx, r); err != nil {
		return fmt.Errorf("authcache: revoke: %w", err)
	}
	c.addRevoked([]*storage.RevokedToken{r}, c.now(), false)
	return nil
}

// reloadRevoked re-reads the revocations still in force and drops the
// lapsed ones from storage. A revocation never leaves the set before its
// token lapses, so the snapshot is merged with what this node already
// holds: a concurrent local Revoke is never lost.
func (c *Cache) reloadRevoked(ctx context.Context) error {
	st := c.opt.Revocations
	if st == nil {
		return nil
	}
	now := c.now()
	l, err := st.ListRevokedTokens(ctx, now)
	if err != nil {
		return fmt.Errorf("authcache: revoked tokens: %w", err)
	}
	c.addRevoked(l, now, true)
	if _, err := st.PurgeRevokedTokens(ctx, now.Add(-time.Minute)); err != nil {
		c.opt.Log.Warn("purging lapsed token revocations failed", "err", err)
	}
	return nil
}

// addRevoked publishes a copy of the set with l added and, when prune is
// set, lapsed entries removed.
func (c *Cache) addRevoked(l []*storage.RevokedToken, now time.Time, prune bool) {
	c.revMu.Lock()
	defer c.revMu.Unlock()
	cur := c.revoked.Load()
	if len(l) == 0 && (cur == nil || !prune) {
		return
	}
	next := make(revokedSet, len(l)+lenOf(cur))
	at := now.UnixNano()
	if cur != nil {
		for jti, until := range *cur {
			if !prune || until > at {
				next[jti] = until
			}
		}
	}
	for _, r := range l {
		if u := r.Until.UnixNano(); u > next[r.JTI] {
			next[r.JTI] = u
		}
	}
	if len(next) == 0 {
		c.revoked.Store(nil)
		return
	}
	c.revoked.Store(&next)
}

func lenOf(rs *revokedSet) int {
	if rs == nil {
		return 0
	}
	return len(*rs)
}
