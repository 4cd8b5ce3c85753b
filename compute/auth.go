package compute

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"

	"svc/compute/wire"
	"svc/iam"
)

// TokenVerifier turns a member's bearer token into a principal. The jwt
// package implements it for SVC_IAM_MODE=jwt; MockVerifier serves mock
// mode. An empty token means the member sent none.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (*iam.Principal, error)
}

// MockVerifier is mock IAM mode: every member, with or without a token, is
// the configured mock principal.
type MockVerifier struct{ Principal *iam.Principal }

// VerifyToken implements TokenVerifier.
func (m MockVerifier) VerifyToken(context.Context, string) (*iam.Principal, error) {
	return m.Principal, nil
}

// Bearer extracts the token of the authorization metadata.
func Bearer(ctx context.Context) string {
	// ValueFromIncomingContext copies only this key's values, not the
	// whole metadata map (a dozen allocations per unary call).
	for _, v := range metadata.ValueFromIncomingContext(ctx, wire.MetadataAuthorization) {
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
	}
	return ""
}
