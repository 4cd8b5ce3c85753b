package config

import (
	"fmt"
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
// allowlist, or "" when it is. The allowlist matches the Origin header by
// exact string, so anything a browser would never send (upper case, a
// default port, percent-encoding, a non-canonical IPv4 form) is refused
// rather than silently never matching.
func originProblem(o string) string {
	switch {
	case o == "":
		return "empty entry (check for a stray comma)"
	case o == "*" || strings.EqualFold(o, "null"):
		return "not allowed in a list"
	case strings.ContainsAny(o, "*{}"):
		return "wildcards are not allowed"
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok {
		return "must be scheme://host[:port]"
	}
	if scheme != "http" && scheme != "https" {
		if l := strings.ToLower(scheme); l == "http" || l == "https" {
			return "scheme must be lower case"
		}
		return "scheme must be http or https in lower case"
	}
	switch {
	case strings.Contains(rest, "@"):
		return "userinfo is not allowed"
	case strings.ContainsAny(rest, "/?#"):
		return "path component (including trailing slash), query or fragment is not allowed"
	case strings.Contains(rest, "%"):
		return "percent-encoding is not allowed"
	}
	host, port, hasPort := rest, "", false
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "unterminated IPv6 literal"
		}
		host = rest[1:end]
		ip := net.ParseIP(host)
		if ip == nil || !strings.Contains(host, ":") {
			return "brackets hold only an IPv6 address (glob patterns are not allowed)"
		}
		if host == strings.ToLower(host) && ip.String() != host {
			return fmt.Sprintf("IPv6 address must be written in its shortest form, [%s]", ip)
		}
		if after := rest[end+1:]; after != "" {
			if after[0] != ':' {
				return "unexpected text after the IPv6 literal"
			}
			port, hasPort = after[1:], true
		}
	} else {
		if strings.ContainsAny(rest, "[]") {
			return "wildcards are not allowed"
		}
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			host, port, hasPort = rest[:i], rest[i+1:], true
		}
		if strings.Contains(host, ":") {
			return "an IPv6 host must be in brackets"
		}
	}
	if host == "" {
		return "host is missing"
	}
	for _, r := range host {
		if r > 127 {
			return "host must be ASCII (use punycode)"
		}
	}
	if host != strings.ToLower(host) {
		return "host must be lower case"
	}
	if !strings.HasPrefix(rest, "[") {
		for _, r := range host {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				return fmt.Sprintf("host contains %q", r)
			}
		}
		if reason := ipv4Problem(host); reason != "" {
			return reason
		}
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		switch {
		case port == "":
			return "port is empty"
		case err != nil || n < 1 || n > 65535 || port[0] == '+':
			return "port must be between 1 and 65535"
		case port != strconv.Itoa(n):
			return "port must be written without leading zeros"
		case scheme == "https" && n == 443, scheme == "http" && n == 80:
			return "default port must be left out"
		}
	}
	if _, err := url.Parse(o); err != nil {
		return "not a URL"
	}
	return ""
}

// ipv4Problem refuses hosts a browser would read as an IPv4 address but
// serialise differently (hex, octal, fewer than four parts). The URL
// standard treats a host as IPv4 when its last label is a number.
func ipv4Problem(host string) string {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := labels[len(labels)-1]
	hexLabel := func(l string) bool { return strings.HasPrefix(l, "0x") }
	if !hexLabel(last) && (last == "" || strings.Trim(last, "0123456789") != "") {
		return "" // a domain name
	}
	for _, l := range labels {
		if hexLabel(l) {
			return "hex IPv4 is not allowed"
		}
	}
	if net.ParseIP(host).To4() == nil {
		return "an IPv4 host must be four decimal parts without leading zeros"
	}
	return ""
}
