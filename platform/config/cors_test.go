package config

import (
	"reflect"
	"testing"
)

func TestCORSMode(t *testing.T) {
	cases := []struct {
		name    string
		env     env
		mode    CORSMode
		origins []string
	}{
		{"default is loopback", env{}, CORSLoopback, nil},
		{"empty is loopback", env{"SVC_CORS_ALLOWED_ORIGINS": ""}, CORSLoopback, nil},
		{"blank is loopback", env{"SVC_CORS_ALLOWED_ORIGINS": "  "}, CORSLoopback, nil},
		{"star alone is wildcard", env{"SVC_CORS_ALLOWED_ORIGINS": "*"}, CORSWildcard, []string{"*"}},
		{"star with spaces is wildcard", env{"SVC_CORS_ALLOWED_ORIGINS": " * "}, CORSWildcard, []string{"*"}},
		{"one origin", env{"SVC_CORS_ALLOWED_ORIGINS": "https://app.example.com"}, CORSAllowlist, []string{"https://app.example.com"}},
		{"list trimmed", env{"SVC_CORS_ALLOWED_ORIGINS": " https://a.example , http://b.example:8080 "}, CORSAllowlist, []string{"https://a.example", "http://b.example:8080"}},
		{"disabled", env{"SVC_CORS_ENABLED": "false"}, CORSDisabled, nil},
		{"disabled wins over a list", env{"SVC_CORS_ENABLED": "false", "SVC_CORS_ALLOWED_ORIGINS": "*"}, CORSDisabled, []string{"*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.env)
			if got := c.CORSMode(); got != tc.mode {
				t.Fatalf("mode = %d, want %d", got, tc.mode)
			}
			if !reflect.DeepEqual(c.CORSAllowedOrigins, tc.origins) {
				t.Fatalf("origins = %#v, want %#v", c.CORSAllowedOrigins, tc.origins)
			}
		})
	}
}

// TestCORSAllowlist runs every allowlist rule of docs/decisions/0028-listeners-and-operations.md. ok
// cases must load; the others must fail naming SVC_CORS_ALLOWED_ORIGINS.
func TestCORSAllowlist(t *testing.T) {
	cases := []struct {
		value string
		ok    bool
	}{
		// accepted
		{"https://app.example.com", true},
		{"http://app.example.com", true},
		{"http://localhost:3000", true},
		{"https://example.com:8443", true},
		{"http://example.com:443", true},    // 443 is not http's default
		{"https://example.com:80", true},    // 80 is not https's default
		{"https://example.com:1", true},     // lowest port
		{"https://example.com:65535", true}, // highest port
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:8080", true},
		{"https://[2001:db8::1]", true},
		{"https://xn--bcher-kva.example", true}, // punycode
		{"https://my-app_1.example.com", true},
		{"https://0xdeadbeef.example", true}, // a domain name, not an IPv4
		{"https://a.example,https://b.example", true},
		{"https://a.example, http://localhost:5173", true},

		// scheme: http or https, lower case
		{"HTTPS://app.example.com", false},
		{"Https://app.example.com", false},
		{"ftp://app.example.com", false},
		{"ws://app.example.com", false},
		{"app.example.com", false},
		{"//app.example.com", false},
		{"https:app.example.com", false},
		{"https:/app.example.com", false},
		// host: lower case ASCII, present, well formed
		{"https://App.Example.com", false},
		{"https://EXAMPLE.COM", false},
		{"https://bücher.example", false},
		{"https://b%C3%BCcher.example", false},
		{"https://%61pp.example", false},
		{"https://", false},
		{"https://:8080", false},
		{"https://app example.com", false},
		{"https://app!.example.com", false},
		{"https://[2001:DB8::1]", false},
		{"https://[::1", false},
		{"https://2001:db8::1", false},
		{"https://[example.com]", false},
		{"https://[::1]x", false},
		{"https://[0:0:0:0:0:0:0:1]", false},
		{"https://[2001:db8:0::1]", false},
		// hex and other non-canonical IPv4
		{"http://0x7f000001", false},
		{"http://0x7f.0.0.1", false},
		{"http://127.0x0.0.1", false},
		{"http://127.1", false},
		{"http://0127.0.0.1", false},
		{"http://2130706433", false},
		// userinfo
		{"https://user@app.example.com", false},
		{"https://user:pass@app.example.com", false},
		{"https://@app.example.com", false},
		// path, including a trailing slash
		{"https://app.example.com/", false},
		{"https://app.example.com/app", false},
		{"https://app.example.com:8443/", false},
		// query and fragment, including empty ones
		{"https://app.example.com?x=1", false},
		{"https://app.example.com?", false},
		{"https://app.example.com#top", false},
		{"https://app.example.com#", false},
		// port: non-default, 1..65535, plain decimal
		{"https://app.example.com:443", false},
		{"http://app.example.com:80", false},
		{"https://app.example.com:0", false},
		{"https://app.example.com:65536", false},
		{"https://app.example.com:99999", false},
		{"https://app.example.com:-1", false},
		{"https://app.example.com:+8443", false},
		{"https://app.example.com:08443", false},
		{"https://app.example.com:0443", false},
		{"https://app.example.com:", false},
		{"https://app.example.com:http", false},
		{"https://[::1]:0", false},
		{"https://[::1]:", false},
		// null and * inside a list
		{"null", false},
		{"NULL", false},
		{"https://a.example,null", false},
		{"*,https://a.example", false},
		{"https://a.example,*", false},
		{"*,*", false},
		// wildcards and globs
		{"https://*.example.com", false},
		{"https://app.example.*", false},
		{"https://app.example.com:*", false},
		{"*.example.com", false},
		{"https://app?.example.com", false},
		{"https://app[12].example.com", false},
		{"https://{a,b}.example.com", false},
		// empty entries from stray commas
		{",", false},
		{",https://a.example", false},
		{"https://a.example,", false},
		{"https://a.example,,https://b.example", false},
		{"https://a.example, ,https://b.example", false},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			_, err := loadEnv(t, env{"SVC_CORS_ALLOWED_ORIGINS": tc.value})
			if tc.ok {
				wantVar(t, err, "")
			} else {
				wantVar(t, err, "SVC_CORS_ALLOWED_ORIGINS")
			}
		})
	}
}

// TestCORSReasons pins the reason given for one example of each rule, so a
// refused origin tells the operator what to fix.
func TestCORSReasons(t *testing.T) {
	cases := map[string]string{
		"":                          "empty entry (check for a stray comma)",
		"null":                      "not allowed in a list",
		"*":                         "not allowed in a list",
		"https://*.example.com":     "wildcards are not allowed",
		"HTTPS://a.example":         "scheme must be lower case",
		"ftp://a.example":           "scheme must be http or https in lower case",
		"a.example":                 "must be scheme://host[:port]",
		"https://u@a.example":       "userinfo is not allowed",
		"https://a.example/":        "path component (including trailing slash), query or fragment is not allowed",
		"https://a.example?q":       "path component (including trailing slash), query or fragment is not allowed",
		"https://a.example#f":       "path component (including trailing slash), query or fragment is not allowed",
		"https://A.example":         "host must be lower case",
		"https://bücher.example":    "host must be ASCII (use punycode)",
		"http://0x7f000001":         "hex IPv4 is not allowed",
		"https://a.example:443":     "default port must be left out",
		"https://a.example:70000":   "port must be between 1 and 65535",
		"https://a.example:0":       "port must be between 1 and 65535",
		"https://a.example:08443":   "port must be written without leading zeros",
		"https://":                  "host is missing",
		"https://a%2eexample":       "percent-encoding is not allowed",
		"https://[a-z].example.com": "brackets hold only an IPv6 address (glob patterns are not allowed)",
		"https://[0:0::1]:8443":     "IPv6 address must be written in its shortest form, [::1]",
		"http://127.1":              "an IPv4 host must be four decimal parts without leading zeros",
	}
	for origin, want := range cases {
		if got := originProblem(origin); got != want {
			t.Errorf("originProblem(%q) = %q, want %q", origin, got, want)
		}
	}
}
