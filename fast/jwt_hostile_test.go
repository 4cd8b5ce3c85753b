package fast

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"
)

func seg(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestHostileTokens: every forged, broken, revoked or out-of-policy token
// gets the same 401 body and challenge; a missing or malformed credential
// gets its own, equally uniform, answer.
func TestHostileTokens(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	valid := h.mint(h.adminClaims(tenantA))
	parts := strings.Split(valid, ".")
	with := func(edit func(jwt.MapClaims)) string {
		c := h.adminClaims(tenantA)
		edit(c)
		return h.mint(c)
	}
	signedWithKID := func(kid string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, h.adminClaims(tenantA))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(h.key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	pubPEM := func() []byte {
		der, _ := x509.MarshalPKIXPublicKey(&h.key.PublicKey)
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}()
	hs256 := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, h.adminClaims(tenantA))
		tok.Header["kid"] = h.kid
		s, err := tok.SignedString(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}()
	tampered := func() string {
		c := h.adminClaims(tenantA)
		c["caas_org_id"] = tenantB
		return parts[0] + "." + seg(c) + "." + parts[2]
	}()
	bigHeader := func() string {
		hdr := map[string]any{"alg": "RS256", "kid": h.kid, "typ": "JWT", "pad": strings.Repeat("A", 48<<10)}
		return seg(hdr) + "." + parts[1] + "." + parts[2]
	}()

	// Three answers only (RFC 6750): no bearer token presented, a
	// credential that is not a bearer token, and a token that does not
	// verify. Within each class every case must be byte-identical, body
	// and challenge, so the answer is no oracle for why a token failed.
	const (
		missing   = "missing token"
		malformed = "malformed token"
		invalid   = "invalid or expired token"
	)
	cases := []struct{ name, auth, class string }{
		{"no header", "", missing},
		{"other scheme", "Basic " + valid, missing},
		{"lower-case bearer", "bearer " + valid, malformed},
		{"empty bearer", "Bearer ", malformed},
		{"garbage", "Bearer not-a-jwt", malformed},
		{"two segments", "Bearer " + parts[0] + "." + parts[1], malformed},
		{"alg none", "Bearer " + seg(map[string]any{"alg": "none", "kid": h.kid, "typ": "JWT"}) + "." + parts[1] + ".", invalid},
		{"alg missing", "Bearer " + seg(map[string]any{"kid": h.kid}) + "." + parts[1] + "." + parts[2], invalid},
		{"HS256 with the public key as secret", "Bearer " + hs256, invalid},
		{"kid path injection", "Bearer " + signedWithKID("../../x"), invalid},
		{"huge kid", "Bearer " + signedWithKID(strings.Repeat("k", 8<<10)), invalid},
		{"kid missing", "Bearer " + signedWithKID(""), invalid},
		{"expired", "Bearer " + with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }), invalid},
		{"exp missing", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "exp") }), invalid},
		{"iat missing", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "iat") }), invalid},
		{"iat in the future", "Bearer " + with(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(10 * time.Minute).Unix() }), invalid},
		{"nbf in the future", "Bearer " + with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() }), invalid},
		{"wrong iss", "Bearer " + with(func(c jwt.MapClaims) { c["iss"] = "evil" }), invalid},
		{"no tenant", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "caas_org_id") }), invalid},
		{"tampered payload", "Bearer " + tampered, invalid},
		{"bad signature", "Bearer " + parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])), invalid},
		{"64 KB header", "Bearer " + bigHeader, invalid},
		{"revoked", "Bearer " + h.revokedToken(), invalid},
	}
	challenge := map[string]string{
		missing:   `Bearer realm="svc"`,
		malformed: `Bearer realm="svc", error="invalid_token", error_description="malformed token"`,
		invalid:   `Bearer realm="svc", error="invalid_token", error_description="invalid or expired token"`,
	}
	first := map[string]reply{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			r := h.do("GET", "/model/", "", nil, hdr...)
			var p map[string]any
			if err := json.Unmarshal(r.body, &p); err != nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if r.status != 401 || p["detail"] != "UNAUTHORIZED: "+c.class || p["status"] != float64(401) ||
				r.header.Get("WWW-Authenticate") != challenge[c.class] {
				t.Fatalf("%d %v %s\nwant 401 %q with challenge %s", r.status, r.header, r.body, c.class, challenge[c.class])
			}
			ref, seen := first[c.class]
			if !seen {
				first[c.class] = r
				return
			}
			if string(r.body) != string(ref.body) || r.header.Get("WWW-Authenticate") != ref.header.Get("WWW-Authenticate") {
				t.Fatalf("%s\ndiffers from the class's first answer %s", r.body, ref.body)
			}
		})
	}
	// The same token, untampered, is accepted: the table tests the forgeries.
	if r := h.do("GET", "/clients", valid, nil); r.status != 200 {
		t.Fatalf("valid control token: %d %s", r.status, r.body)
	}
}

// An admin route with a bad token is 401 too, never 403.
func TestAdminRouteBadTokenIs401(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	if r := h.do("GET", "/clients", "x.y.z", nil); r.status != 401 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := h.do("GET", "/help", "", nil); r.status != 200 {
		t.Fatalf("help needs no token: %d", r.status)
	}
}
