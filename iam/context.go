package iam

import "context"

// PrincipalKey is the context key under which the HTTP layer keeps the
// request's principal. It is a string because fasthttp's RequestCtx, which
// handlers pass on as their context.Context, answers Value(key) from its
// user values, which the HTTP layer sets by this string.
const PrincipalKey = "svc.principal"

// PrincipalFrom returns the principal a request context carries, or nil.
// Domain code that calls out on the principal's behalf (workflow
// processors) reads it here without depending on the HTTP layer.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(PrincipalKey).(*Principal)
	return p
}
