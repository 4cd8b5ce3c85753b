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

// TestHostileTokens: every forged, broken or out-of-policy token gets the
// same 401 body as no token at all.
func TestHostileTokens(t *testing.T) {
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

	cases := []struct{ name, auth string }{
		{"no header", ""},
		{"other scheme", "Basic " + valid},
		{"lower-case bearer", "bearer " + valid},
		{"empty bearer", "Bearer "},
		{"garbage", "Bearer not-a-jwt"},
		{"two segments", "Bearer " + parts[0] + "." + parts[1]},
		{"alg none", "Bearer " + seg(map[string]any{"alg": "none", "kid": h.kid, "typ": "JWT"}) + "." + parts[1] + "."},
		{"alg missing", "Bearer " + seg(map[string]any{"kid": h.kid}) + "." + parts[1] + "." + parts[2]},
		{"HS256 with the public key as secret", "Bearer " + hs256},
		{"kid path injection", "Bearer " + signedWithKID("../../x")},
		{"huge kid", "Bearer " + signedWithKID(strings.Repeat("k", 8<<10))},
		{"kid missing", "Bearer " + signedWithKID("")},
		{"expired", "Bearer " + with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })},
		{"exp missing", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"iat missing", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "iat") })},
		{"iat in the future", "Bearer " + with(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(10 * time.Minute).Unix() })},
		{"nbf in the future", "Bearer " + with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() })},
		{"wrong iss", "Bearer " + with(func(c jwt.MapClaims) { c["iss"] = "evil" })},
		{"no tenant", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "caas_org_id") })},
		{"tampered payload", "Bearer " + tampered},
		{"bad signature", "Bearer " + parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))},
		{"64 KB header", "Bearer " + bigHeader},
	}
	ref := h.do("GET", "/model/", "", nil)
	if ref.status != 401 {
		t.Fatalf("reference: %d %s", ref.status, ref.body)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			r := h.do("GET", "/model/", "", nil, hdr...)
			if r.status != 401 || string(r.body) != string(ref.body) {
				t.Fatalf("%d %s\nwant the uniform 401 %s", r.status, r.body, ref.body)
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
	h := newJWTHarness(t)
	if r := h.do("GET", "/clients", "x.y.z", nil); r.status != 401 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := h.do("GET", "/help", "", nil); r.status != 200 {
		t.Fatalf("help needs no token: %d", r.status)
	}
}
