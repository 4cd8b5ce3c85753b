package config

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// CORSMode is how the CORS middleware decides on an origin.
type CORSMode int

const (
	CORSDisabled CORSMode = iota
	CORSLoopback
	CORSWildcard
	CORSAllowlist
)

// CORSMode derives the mode: disabled, `*`, empty (loopback) or a list.
func (c *Config) CORSMode() CORSMode {
	switch {
	case !c.CORSEnabled:
		return CORSDisabled
	case len(c.CORSAllowedOrigins) == 1 && c.CORSAllowedOrigins[0] == "*":
		return CORSWildcard
	case len(c.CORSAllowedOrigins) == 0:
		return CORSLoopback
	default:
		return CORSAllowlist
	}
}

func (c *Config) validateCORS() *Error {
	if c.CORSMode() != CORSAllowlist {
		return nil
	}
	for _, o := range c.CORSAllowedOrigins {
		if reason := originProblem(o); reason != "" {
			return errf("SVC_CORS_ALLOWED_ORIGINS", "origin %q: %s", o, reason)
		}
	}
	return nil
}

// originProblem says why o is not an RFC 6454 serialized origin fit for an
// allowlist, or "" when it is.
func originProblem(o string) string {
	switch {
	case o == "":
		return "empty entry (check for a stray comma)"
	case o == "*" || o == "null":
		return "not allowed in a list"
	case strings.ContainsAny(o, "*?[]{}") && !strings.Contains(o, "://["):
		return "wildcards are not allowed"
	}
	u, err := url.Parse(o)
	if err != nil {
		return "not a URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "scheme must be http or https in lower case"
	}
	if !strings.HasPrefix(o, u.Scheme+"://") {
		return "scheme must be lower case"
	}
	if u.User != nil {
		return "userinfo is not allowed"
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
		return "path component (including trailing slash), query or fragment is not allowed"
	}
	host := u.Hostname()
	if host == "" {
		return "host is missing"
	}
	if host != strings.ToLower(host) {
		return "host must be lower case"
	}
	for _, r := range host {
		if r > 127 {
			return "host must be ASCII (use punycode)"
		}
	}
	if strings.HasPrefix(host, "0x") || net.ParseIP(host) == nil && strings.Contains(host, ".0x") {
		return "hex IPv4 is not allowed"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "port must be between 1 and 65535"
		}
		if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
			return "default port must be left out"
		}
	}
	return ""
}
