// Package iam holds identities: the authenticated principal every request
// carries and, in jwt mode, the machinery that proves it.
package iam

// Principal is who a request acts for. Every read and write is scoped to
// TenantID.
type Principal struct {
	Kind string // user, service or system
	// Subject is the verified token's sub; token exchange copies it into
	// the on-behalf-of token. Empty in mock mode.
	Subject    string
	UserID     string
	UserName   string
	TenantID   string
	TenantName string
	Roles      []string
}

// Role names (docs/decisions/0007-bearer-verification.md).
const (
	RoleAdmin = "ROLE_ADMIN"
	RoleM2M   = "ROLE_M2M"
)

// HasRole reports whether p holds role.
func (p *Principal) HasRole(role string) bool {
	for _, r := range p.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// MockPrincipal is the default user context of mock mode (docs/decisions/0007-bearer-verification.md), with the
// identity values clients of the compatible system expect.
func MockPrincipal(kind string, roles []string) *Principal {
	return &Principal{
		Kind:       kind,
		UserID:     "mock-user-001",
		UserName:   "Mock User",
		TenantID:   "mock-tenant",
		TenantName: "Mock Tenant",
		Roles:      append([]string(nil), roles...),
	}
}
