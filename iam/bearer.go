package iam

import "errors"

// Bearer-token refusals, as coarse as RFC 6750 lets a client act on: no
// token at all, a credential that is not a bearer token, or a token that
// does not verify. Every reason a well-formed token fails (bad signature,
// unknown key, expiry, revocation, stale caches) is ErrTokenInvalid, so the
// answer is no oracle; the precise reason goes only to the log.
var (
	ErrTokenMissing   = errors.New("missing token")
	ErrTokenMalformed = errors.New("malformed token")
	ErrTokenInvalid   = errors.New("invalid or expired token")
)
