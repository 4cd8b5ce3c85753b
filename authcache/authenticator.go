package authcache

import (
	"context"
	"log/slog"
	"net"

	"svc/iam"
)

// Authenticator verifies the Authorization header of jwt mode (the HTTP
// layer adapts it with fast.HeaderAuth). It says only whether a token was
// missing, malformed or invalid (iam.ErrToken*); the precise reason goes
// to the log as a slug (never the token).
type Authenticator struct {
	C   *Cache
	Log *slog.Logger
}

// Origin is the request a header came with, named in the failure log;
// the HTTP layer's request context satisfies it. It is read only when
// authentication fails.
type Origin interface {
	RemoteAddr() net.Addr
	Method() []byte
	Path() []byte
}

// Authenticate verifies h, the value of an Authorization header
// ("Bearer <token>"); from names the request in the failure log and may
// be nil.
func (a *Authenticator) Authenticate(ctx context.Context, h []byte, from Origin) (*iam.Principal, error) {
	var reason string
	fail := iam.ErrTokenMalformed
	switch {
	case len(h) == 0:
		reason, fail = "missing-header", iam.ErrTokenMissing
	case !hasBearerScheme(h):
		// Another scheme (Basic, …) presents no bearer token at all.
		reason, fail = "invalid-format", iam.ErrTokenMissing
	case len(h) < 7 || string(h[:7]) != "Bearer ":
		reason = "invalid-format"
	case len(h) == 7:
		reason = "empty-bearer"
	default:
		p, err := a.C.Verify(ctx, h[7:])
		if err == nil {
			return p, nil
		}
		// Classified only after failing, so a cached hit never scans
		// the token.
		reason, fail = "token-invalid", iam.ErrTokenInvalid
		switch {
		case !jwtShaped(h[7:]):
			reason, fail = "not-a-jwt", iam.ErrTokenMalformed
		case err == ErrStale:
			reason = "caches-stale"
		case err == ErrRevoked:
			reason = "token-revoked"
		}
	}
	if a.Log != nil && from != nil {
		a.Log.Warn("authentication failed", "reason", reason, "remote", from.RemoteAddr().String(),
			"method", string(from.Method()), "path", string(from.Path()))
	} else if a.Log != nil {
		a.Log.Warn("authentication failed", "reason", reason)
	}
	return nil, fail
}

// hasBearerScheme: the header names the Bearer scheme, in any case (RFC
// 7235 schemes are case-insensitive; only the exact spelling verifies, the
// rest is malformed rather than missing).
func hasBearerScheme(h []byte) bool {
	if len(h) < 6 {
		return false
	}
	for i, c := range []byte("bearer") {
		if h[i]|0x20 != c {
			return false
		}
	}
	return len(h) == 6 || h[6] == ' ' || h[6] == '\t'
}

// jwtShaped: three dot-separated runs of base64url characters, the first
// two non-empty. Anything else cannot be a token of any verifier.
func jwtShaped(t []byte) bool {
	dots, run := 0, 0
	for _, c := range t {
		switch {
		case c == '.':
			if run == 0 && dots < 2 {
				return false
			}
			dots++
			run = 0
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			run++
		default:
			return false
		}
	}
	return dots == 2
}
