package crud

import (
	"context"
	"errors"

	"svc/iam"
)

// tokens is a test double for the jwt verifier: fixed tokens map to
// principals.
type tokens map[string]*iam.Principal

func (t tokens) VerifyToken(_ context.Context, tok string) (*iam.Principal, error) {
	if p := t[tok]; p != nil {
		return p, nil
	}
	return nil, errors.New("bad token")
}

var testTokens = tokens{
	"m2m-t1": {Kind: "service", UserID: "svc-1", TenantID: "t1", Roles: []string{iam.RoleM2M}},
}
