package federation

import (
	"sort"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// rolesFrom reads roles from claim name: the exact top-level claim first
// (names like "cognito:groups" or "https://x/roles" are literal), then, if
// absent and the name is dotted, the nested path (realm_access.roles).
// Accepted shapes: an array of strings, an object whose keys are the roles,
// a whitespace-separated string. Anything else yields no roles.
func rolesFrom(c jwt.MapClaims, name string) []string {
	v, ok := c[name]
	if !ok && strings.Contains(name, ".") {
		var cur any = map[string]any(c)
		for _, seg := range strings.Split(name, ".") {
			m, isObj := cur.(map[string]any)
			if !isObj {
				cur = nil
				break
			}
			cur = m[seg]
		}
		v = cur
	}
	var out []string
	switch x := v.(type) {
	case []any:
		out = stringElems(x)
	case map[string]any:
		for k := range x {
			out = append(out, k)
		}
		sort.Strings(out)
	case string:
		out = strings.Fields(x)
	}
	return dropCommaRoles(out)
}
