package federation

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/iam"
)

type trustedEntry struct {
	tenant    string
	key       *rsa.PublicKey
	issuers   []string
	validFrom time.Time
	validTo   time.Time
}

type trustedSnapshot struct {
	byKID map[string]*trustedEntry
}

// Refresh re-reads every trusted key into the verification snapshot.
func (t *TrustedKeys) Refresh(ctx context.Context) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	all, err := t.store.ListAllTrustedKeys(ctx)
	if err != nil {
		return fmt.Errorf("reading trusted keys: %w", err)
	}
	s := &trustedSnapshot{byKID: make(map[string]*trustedEntry, len(all))}
	fp := xxhash.New()
	for _, k := range all {
		fmt.Fprintf(fp, "%s\x00%s\x00%s\x00%d\x00%d\x00%q\x00", k.KID, k.Tenant, k.JWK, k.ValidFrom.UnixNano(), k.ValidTo.UnixNano(), k.Issuers)
		var jwk struct {
			N string `json:"n"`
			E string `json:"e"`
		}
		if err := jsonUnmarshal(k.JWK, &jwk); err != nil {
			continue
		}
		pub, err := rsaFromNE(jwk.N, jwk.E)
		if err != nil {
			continue
		}
		s.byKID[k.KID] = &trustedEntry{tenant: k.Tenant, key: pub, issuers: k.Issuers, validFrom: k.ValidFrom, validTo: k.ValidTo}
	}
	t.snap.Store(s)
	t.health.succeeded()
	t.changed.observe(fp.Sum64())
	return nil
}

func (t *TrustedKeys) refreshAfterWrite(ctx context.Context) {
	if err := t.Refresh(context.WithoutCancel(ctx)); err != nil {
		t.cfg.Log.Error("refreshing the trusted-key cache after a write", "err", err)
	}
}

// Run reconciles the snapshot with the store until ctx ends.
func (t *TrustedKeys) Run(ctx context.Context) {
	reconcileLoop(ctx, t.cfg.ReconcileInterval, t.cfg.Log, "trusted-keys", t.Refresh)
}

// Verifier returns the authcache.External of trusted keys, the third and
// last link of the chain.
func (t *TrustedKeys) Verifier() authcache.External { return trustedVerifier{t} }

type trustedVerifier struct{ t *TrustedKeys }

// VerifyExternal accepts a token signed by a registered trusted key inside
// its validity window (grace included) that follows svc's own claim
// contract: exp and iat required, iss one of the key's issuers (or
// SVC_JWT_ISSUER), aud per SVC_JWT_AUDIENCE, caas_org_id equal to the
// key's tenant.
func (v trustedVerifier) VerifyExternal(_ context.Context, token string) (*iam.Principal, time.Time, error) {
	t := v.t
	if len(token) > maxTokenBytes {
		return nil, time.Time{}, reject("token too large")
	}
	if t.health.stale() {
		// Fail closed: act as if no key were known.
		return nil, time.Time{}, authcache.ErrNoMatch
	}
	snap := t.snap.Load()
	now := t.now()
	var entry *trustedEntry
	tok, err := parser.ParseWithClaims(token, jwt.MapClaims{}, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		e := snap.byKID[kid]
		if kid == "" || e == nil || now.Before(e.validFrom) || !now.Before(e.validTo) {
			return nil, authcache.ErrNoMatch
		}
		entry = e
		return e.key, nil
	})
	if err != nil {
		if errors.Is(err, authcache.ErrNoMatch) {
			return nil, time.Time{}, authcache.ErrNoMatch
		}
		return nil, time.Time{}, reject("%v", err)
	}
	c := tok.Claims.(jwt.MapClaims)
	if _, ok := numericTime(c, "iat"); !ok {
		return nil, time.Time{}, reject("missing iat")
	}
	iss, _ := c["iss"].(string)
	if len(entry.issuers) > 0 {
		if !containsAny([]string{iss}, entry.issuers) {
			return nil, time.Time{}, reject("untrusted issuer")
		}
	} else if iss != t.cfg.Issuer {
		return nil, time.Time{}, reject("untrusted issuer")
	}
	if t.cfg.Audience != "" && !containsAny(audiences(c), []string{t.cfg.Audience}) {
		return nil, time.Time{}, reject("audience mismatch")
	}
	p, err := firstPartyPrincipal(c)
	if err != nil {
		return nil, time.Time{}, err
	}
	if p.TenantID != entry.tenant {
		return nil, time.Time{}, reject("caas_org_id is not the key's tenant")
	}
	exp, _ := numericTime(c, "exp")
	return p, exp, nil
}
