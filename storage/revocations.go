package storage

import (
	"context"
	"time"
)

// RevokedToken records that an access token was revoked (RFC 7009). Only
// its jti is kept, never the token. Verification refuses the jti until
// Until, the last instant the token itself could still verify; after that
// the record has no effect and may be purged.
type RevokedToken struct {
	JTI       string
	Tenant    string
	ClientID  string // the client that revoked it
	Until     time.Time
	RevokedAt time.Time
}

// RevokedTokens stores revocations. Every node reads the same records, so
// a token revoked on one node is refused by all of them once their
// verification caches reconcile.
type RevokedTokens interface {
	// RevokeToken records r. Revoking a jti again keeps the later Until,
	// so a revocation never ends early.
	RevokeToken(ctx context.Context, r *RevokedToken) error
	// ListRevokedTokens returns every revocation with Until after now.
	ListRevokedTokens(ctx context.Context, now time.Time) ([]*RevokedToken, error)
	// PurgeRevokedTokens deletes the revocations with Until before
	// before and returns how many it deleted.
	PurgeRevokedTokens(ctx context.Context, before time.Time) (int, error)
}
