package federation

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"svc/iam"
)

// maxTokenBytes bounds what is parsed at all; real tokens are a few KiB.
const maxTokenBytes = 16 << 10

// parser verifies RS256 only, with the leeway and a required exp. Header
// members jku, x5u, jwk and x5c are never consulted: keys come only from
// registrations.
var parser = jwt.NewParser(
	jwt.WithValidMethods([]string{"RS256"}),
	jwt.WithLeeway(Leeway),
	jwt.WithExpirationRequired(),
	jwt.WithIssuedAt(),
)

func reject(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errVerify}, a...)...)
}

// numericTime reads a NumericDate claim.
func numericTime(c jwt.MapClaims, name string) (time.Time, bool) {
	var d *jwt.NumericDate
	var err error
	switch name {
	case "exp":
		d, err = c.GetExpirationTime()
	case "iat":
		d, err = c.GetIssuedAt()
	case "nbf":
		d, err = c.GetNotBefore()
	}
	if err != nil || d == nil {
		return time.Time{}, false
	}
	return d.Time, true
}

// audiences returns aud as a list (string or array form).
func audiences(c jwt.MapClaims) []string {
	a, err := c.GetAudience()
	if err != nil {
		return nil
	}
	return a
}

func containsAny(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}

// stringClaim returns a non-empty string claim.
func stringClaim(c jwt.MapClaims, name string) (string, bool) {
	s, ok := c[name].(string)
	return s, ok && s != ""
}

// validSubject applies the federated sub rules: 1–255 runes, no control
// characters.
func validSubject(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > 255 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func stringElems(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// firstPartyPrincipal binds a token that follows svc's own claim contract
// (trusted-key tokens): user from caas_user_id or sub, tenant from
// caas_org_id, roles from user_roles else scopes; kind service for a
// machine token (scopes without act), else user.
func firstPartyPrincipal(c jwt.MapClaims) (*iam.Principal, error) {
	user, ok := stringClaim(c, "caas_user_id")
	if !ok {
		if user, ok = stringClaim(c, "sub"); !ok {
			return nil, reject("token has neither caas_user_id nor sub")
		}
	}
	tenant, ok := stringClaim(c, "caas_org_id")
	if !ok {
		return nil, reject("token has no caas_org_id")
	}
	roles := stringElems(c["user_roles"])
	if len(roles) == 0 {
		roles = stringElems(c["scopes"])
	}
	_, hasUserRoles := c["user_roles"]
	_, hasScopes := c["scopes"]
	_, hasAct := c["act"]
	kind := "user"
	switch {
	case hasScopes && !hasAct:
		kind = "service"
	case hasUserRoles:
		kind = "user"
	case hasScopes:
		kind = "service"
	}
	return &iam.Principal{Kind: kind, UserID: user, UserName: user, TenantID: tenant, TenantName: tenant, Roles: roles}, nil
}

// dropCommaRoles removes role names containing a comma; they could not
// round-trip through the CSV forms roles travel in.
func dropCommaRoles(in []string) []string {
	out := in[:0]
	for _, r := range in {
		if r != "" && !strings.Contains(r, ",") {
			out = append(out, r)
		}
	}
	return out
}
