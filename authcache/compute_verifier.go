package authcache

import (
	"context"
	"errors"
	"log/slog"

	"svc/iam"
)

// TokenVerifier authenticates compute members in jwt mode: it is the
// compute.TokenVerifier over the same verification chain as HTTP bearer
// tokens (own keys, OIDC providers, trusted keys). It only authenticates;
// compute's startStreaming then requires ROLE_M2M of the principal and
// answers PermissionDenied without it, which is a different gRPC code from
// a token that does not verify (Unauthenticated); see
// docs/decisions/0019-compute-members.md.
type TokenVerifier struct {
	C   *Cache
	Log *slog.Logger
}

var errNoToken = errors.New("authcache: no bearer token")

// VerifyToken implements compute.TokenVerifier. An empty token (no
// authorization metadata) fails. The failure reason goes to the log as a
// slug, never the token.
func (v *TokenVerifier) VerifyToken(ctx context.Context, token string) (*iam.Principal, error) {
	if token == "" {
		v.warn("missing-token")
		return nil, errNoToken
	}
	p, err := v.C.Verify(ctx, []byte(token))
	if err != nil {
		reason := "token-invalid"
		if errors.Is(err, ErrStale) {
			reason = "caches-stale"
		}
		v.warn(reason)
		return nil, err
	}
	return p, nil
}

func (v *TokenVerifier) warn(reason string) {
	if v.Log != nil {
		v.Log.Warn("compute member authentication failed", "reason", reason)
	}
}
