package authcache

import (
	"context"
	"errors"
	"time"

	"svc/iam"
)

// External verifies a token svc did not sign (OIDC provider or trusted key).
// It returns ErrNoMatch when no provider or trusted key claims the token's
// issuer/kid, so the chain can move on and finally answer 401.
type External interface {
	VerifyExternal(ctx context.Context, token string) (*iam.Principal, time.Time /*exp*/, error)
}

var ErrNoMatch = errors.New("authcache: no verifier for this token")
