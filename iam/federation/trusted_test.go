package federation

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/platform/apierr"
	"svc/storage/memory"
)

const svcIssuer = "svc"

func newTrusted(t *testing.T, mod func(*TrustedConfig)) *TrustedKeys {
	t.Helper()
	cfg := TrustedConfig{Enabled: true, MaxJWKProps: 20, MaxPerTenant: 10, DefaultValidity: 365 * 24 * time.Hour,
		Issuer: svcIssuer, ReconcileInterval: time.Minute}
	if mod != nil {
		mod(&cfg)
	}
	tk := NewTrustedKeys(cfg, memory.NewIAMStores().TrustedKeys)
	if err := tk.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	return tk
}

func reg(kid string, key int) *TrustedKeyRegistration {
	return &TrustedKeyRegistration{KeyID: kid, JWK: json.RawMessage(jwkJSON(kid, &testKey(nil, key).PublicKey))}
}

func fpClaims(tenant string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": svcIssuer, "sub": "svc-user", "caas_org_id": tenant, "caas_user_id": "u1",
		"user_roles": []any{"ROLE_ADMIN"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func TestTrustedDisabled(t *testing.T) {
	tk := newTrusted(t, func(c *TrustedConfig) { c.Enabled = false })
	checks := map[string]error{}
	_, checks["register"] = tk.Register(bg, "A", reg("k1", 0))
	_, checks["list"] = tk.List(bg, "A")
	checks["invalidate"] = tk.Invalidate(bg, "A", "k1", nil)
	_, checks["reactivate"] = tk.Reactivate(bg, "A", "k1", &Reactivation{})
	checks["delete"] = tk.Delete(bg, "A", "k1")
	for op, err := range checks {
		if code(err) != apierr.FeatureDisabled.String() {
			t.Errorf("%s: %v", op, err)
		}
	}
}

func TestTrustedJWKValidation(t *testing.T) {
	tk := newTrusted(t, func(c *TrustedConfig) { c.MaxJWKProps = 8 })
	pub := &testKey(t, 0).PublicKey
	good := jwkJSON("k1", pub)
	small := `{"kty":"RSA","kid":"k1","n":"` + strings.Repeat("A", 170) + `","e":"AQAB"}`
	huge := `{"kty":"RSA","kid":"k1","n":"` + strings.Repeat("_w", 350) + `","e":"AQAB"}`
	cases := []struct {
		name, kid, jwk, want string
	}{
		{"ok", "k1", good, ""},
		{"kid mismatch", "k2", good, "BAD_REQUEST"},
		{"EC key", "k1", `{"kty":"EC","crv":"P-256","x":"a","y":"b"}`, apierr.UnsupportedKeyType.String()},
		{"no kty", "k1", `{"n":"AQAB","e":"AQAB"}`, "BAD_REQUEST"},
		{"kty not string", "k1", `{"kty":1}`, "BAD_REQUEST"},
		{"too many properties", "k1", `{"kty":"RSA","a":1,"b":2,"c":3,"d2":4,"f":5,"g":6,"h":7,"i":8}`, "BAD_REQUEST"},
		{"private member", "k1", strings.Replace(good, `"kty"`, `"d":"AQAB","kty"`, 1), "BAD_REQUEST"},
		{"modulus over 4096 bits", "k1", huge, "BAD_REQUEST"},
		{"modulus under 2048 bits", "k1", small, "BAD_REQUEST"},
		{"even exponent", "k1", strings.Replace(good, `"e":"AQAB"`, `"e":"AQAC"`, 1), "BAD_REQUEST"},
		{"HS alg", "k1", strings.Replace(good, `"RS256"`, `"HS256"`, 1), "UNSUPPORTED_ALGORITHM"},
		{"not an object", "k1", `[1]`, "BAD_REQUEST"},
		{"bad keyId", "k/1", good, "BAD_REQUEST"},
	}
	for _, c := range cases {
		_, err := tk.Register(bg, "A", &TrustedKeyRegistration{KeyID: c.kid, JWK: json.RawMessage(c.jwk)})
		if code(err) != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestTrustedRegisterRules(t *testing.T) {
	tk := newTrusted(t, func(c *TrustedConfig) { c.MaxPerTenant = 2 })
	v, err := tk.Register(bg, "A", reg("a1", 0))
	if err != nil {
		t.Fatal(err)
	}
	if d := v.ValidTo.Sub(v.ValidFrom); d != 365*24*time.Hour || !v.Active || v.LegalEntityID != "A" || v.Issuers != nil || v.Audience != "client" {
		t.Fatalf("defaults: %+v", v)
	}
	if _, err := tk.Register(bg, "B", reg("a1", 0)); code(err) != apierr.KeyOwnedByDifferentTenant.String() {
		t.Fatalf("other tenant's keyId: %v", err)
	}
	if _, err := tk.Register(bg, "A", reg("a2", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Register(bg, "A", reg("a3", 2)); code(err) != apierr.TrustedKeyCapReached.String() {
		t.Fatalf("over cap: %v", err)
	}
	up := reg("a2", 1)
	up.Issuers = &[]string{}
	if v, err := tk.Register(bg, "A", up); err != nil || v.Issuers == nil || len(*v.Issuers) != 0 {
		t.Fatalf("upsert at the cap echoes []: %+v %v", v, err)
	}
	to := time.Now().Add(-time.Hour)
	bad := reg("a4", 3)
	bad.ValidTo = &to
	if _, err := tk.Register(bg, "A", bad); code(err) != "BAD_REQUEST" {
		t.Fatalf("validTo before validFrom: %v", err)
	}
	neg := int64(-1)
	bad = reg("a4", 3)
	bad.InvalidateGracePeriodSec = &neg
	if _, err := tk.Register(bg, "A", bad); code(err) != "BAD_REQUEST" {
		t.Fatalf("negative grace: %v", err)
	}
	// Bare shape: just a JWK (its kid names the key).
	tk2 := newTrusted(t, nil)
	if v, err := tk2.Register(bg, "A", &TrustedKeyRegistration{JWK: json.RawMessage(jwkJSON("only-jwk", &testKey(t, 0).PublicKey))}); err != nil || v.KeyID != "only-jwk" {
		t.Fatalf("jwk-only registration: %+v %v", v, err)
	}
}

func TestTrustedLifecycleAndVerification(t *testing.T) {
	tk := newTrusted(t, nil)
	k := testKey(t, 0)
	if _, err := tk.Register(bg, "A", reg("a1", 0)); err != nil {
		t.Fatal(err)
	}
	ver := tk.Verifier()
	tok := sign(t, k, "a1", fpClaims("A", nil))
	pr, _, err := ver.VerifyExternal(bg, tok)
	if err != nil || pr.TenantID != "A" || pr.UserID != "u1" || pr.Kind != "user" || !slices.Equal(pr.Roles, []string{"ROLE_ADMIN"}) {
		t.Fatalf("trusted token: %+v %v", pr, err)
	}
	m2m, _, err := ver.VerifyExternal(bg, sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"user_roles": nil, "caas_user_id": nil, "scopes": []any{"ROLE_M2M"}})))
	if err != nil || m2m.Kind != "service" || m2m.UserID != "svc-user" || !slices.Equal(m2m.Roles, []string{"ROLE_M2M"}) {
		t.Fatalf("machine token: %+v %v", m2m, err)
	}
	hostile := map[string]string{
		"other tenant claim": sign(t, k, "a1", fpClaims("B", nil)),
		"no tenant":          sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"caas_org_id": nil})),
		"foreign issuer":     sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"iss": "elsewhere"})),
		"no iat":             sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"iat": nil})),
		"no exp":             sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"exp": nil})),
		"expired":            sign(t, k, "a1", fpClaims("A", jwt.MapClaims{"exp": time.Now().Add(-time.Minute).Unix()})),
		"wrong key":          sign(t, testKey(t, 1), "a1", fpClaims("A", nil)),
	}
	for name, tok := range hostile {
		if _, _, err := ver.VerifyExternal(bg, tok); err == nil || errors.Is(err, authcache.ErrNoMatch) {
			t.Errorf("%s: %v, want a hard rejection", name, err)
		}
	}
	if _, _, err := ver.VerifyExternal(bg, sign(t, k, "unknown", fpClaims("A", nil))); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("unknown kid: %v", err)
	}
	// Tenant B cannot touch A's key.
	if err := tk.Invalidate(bg, "B", "a1", nil); code(err) != apierr.TrustedKeyNotFound.String() {
		t.Fatalf("B invalidates: %v", err)
	}
	if err := tk.Delete(bg, "B", "a1"); code(err) != apierr.TrustedKeyNotFound.String() {
		t.Fatalf("B deletes: %v", err)
	}
	future := time.Now().Add(time.Hour)
	if _, err := tk.Reactivate(bg, "B", "a1", &Reactivation{ValidTo: &future}); code(err) != apierr.TrustedKeyNotFound.String() {
		t.Fatalf("B reactivates: %v", err)
	}
	if l, _ := tk.List(bg, "B"); len(l) != 0 {
		t.Fatalf("B lists: %v", l)
	}
	// Grace: an invalidated key verifies until the grace ends.
	grace := int64(3600)
	if err := tk.Invalidate(bg, "A", "a1", &grace); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
		t.Fatalf("within grace: %v", err)
	}
	zero := int64(0)
	if err := tk.Invalidate(bg, "A", "a1", &zero); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ver.VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("invalidated without grace: %v", err)
	}
	if l, _ := tk.List(bg, "A"); len(l) != 1 || l[0].Active {
		t.Fatalf("after invalidate: %+v", l)
	}
	past := time.Now().Add(-time.Minute)
	for name, r := range map[string]*Reactivation{"no validTo": {}, "past validTo": {ValidTo: &past}, "nil": nil} {
		if _, err := tk.Reactivate(bg, "A", "a1", r); code(err) != "BAD_REQUEST" {
			t.Errorf("reactivate %s: %v", name, err)
		}
	}
	if v, err := tk.Reactivate(bg, "A", "a1", &Reactivation{ValidTo: &future}); err != nil || !v.Active {
		t.Fatalf("reactivate: %+v %v", v, err)
	}
	if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
		t.Fatalf("reactivated: %v", err)
	}
	if err := tk.Delete(bg, "A", "a1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ver.VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("deleted: %v", err)
	}
}

func TestTrustedIssuersAndAudience(t *testing.T) {
	tk := newTrusted(t, func(c *TrustedConfig) { c.Audience = "svc-api" })
	r := reg("a1", 0)
	r.Issuers = &[]string{"https://partner"}
	if _, err := tk.Register(bg, "A", r); err != nil {
		t.Fatal(err)
	}
	k := testKey(t, 0)
	ver := tk.Verifier()
	for name, c := range map[string]struct {
		claims jwt.MapClaims
		ok     bool
	}{
		"listed issuer, aud": {fpClaims("A", jwt.MapClaims{"iss": "https://partner", "aud": []any{"x", "svc-api"}}), true},
		"svc issuer":         {fpClaims("A", jwt.MapClaims{"aud": "svc-api"}), false},
		"no aud":             {fpClaims("A", jwt.MapClaims{"iss": "https://partner"}), false},
	} {
		_, _, err := ver.VerifyExternal(bg, sign(t, k, "a1", c.claims))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTrustedRetireSiblingsAndCapOnReactivate(t *testing.T) {
	tk := newTrusted(t, func(c *TrustedConfig) { c.MaxPerTenant = 1 })
	if _, err := tk.Register(bg, "A", reg("a1", 0)); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := tk.Invalidate(bg, "A", "a1", &zero); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Register(bg, "A", reg("a2", 1)); err != nil {
		t.Fatalf("inactive key counted against the cap: %v", err)
	}
	future := time.Now().Add(time.Hour)
	if _, err := tk.Reactivate(bg, "A", "a1", &Reactivation{ValidTo: &future}); code(err) != apierr.TrustedKeyCapReached.String() {
		t.Fatalf("reactivate over the cap: %v", err)
	}
	tk2 := newTrusted(t, nil)
	tk2.Register(bg, "A", reg("a1", 0))
	r := reg("a2", 1)
	r.InvalidatePrevious = true
	if _, err := tk2.Register(bg, "A", r); err != nil {
		t.Fatal(err)
	}
	l, _ := tk2.List(bg, "A")
	state := fmt.Sprintf("%s %v %s %v", l[0].KeyID, l[0].Active, l[1].KeyID, l[1].Active)
	if state != "a1 false a2 true" {
		t.Fatalf("after invalidatePrevious: %s", state)
	}
}
