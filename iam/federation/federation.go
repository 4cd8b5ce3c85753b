// Package federation trusts identities svc did not issue: public keys a
// tenant registered (trusted keys) and external OpenID Connect providers.
// It administers both and verifies their tokens for the authcache chain
// (own keys → providers → trusted keys) through authcache.External.
package federation

import (
	"errors"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// Leeway is the clock skew allowed on exp, nbf and iat.
const Leeway = 30 * time.Second

// MaxGraceSec caps invalidation grace periods (366 days).
const MaxGraceSec = 31622400

// maxBody caps admin request bodies and fetched documents.
const maxBody = 1 << 20

// Error codes of this package (all have topics in help/topics/errors).

func badRequest(msg string, props ...apierr.Prop) error {
	return apierr.New(apierr.BadRequest, msg, props...)
}

// errVerify is the cause of every verification failure. The HTTP layer
// answers one uniform 401 whatever it wraps; the wrapped text is for logs.
var errVerify = errors.New("federation: token rejected")

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
