package federation

import (
	"context"
	"crypto/rsa"
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/iam"
)

// Verifier returns the authcache.External of OIDC providers, the second
// link of the chain.
func (p *Providers) Verifier() authcache.External { return providerVerifier{p} }

type providerVerifier struct{ p *Providers }

var errAmbiguous = errors.New("federation: several providers claim the token and its audience does not single one out")

// VerifyExternal accepts a token of a registered, active, discovered
// provider: the issuer matches the registration (bytewise), the kid is in
// the provider's JWKS, RS256 verifies, exp is present, iat is not before
// the registration, the audience passes, and sub is a sane identifier. The
// principal's tenant is the provider's owner; tenant claims in the token
// are ignored.
func (v providerVerifier) VerifyExternal(ctx context.Context, token string) (*iam.Principal, time.Time, error) {
	p := v.p
	if len(token) > maxTokenBytes {
		return nil, time.Time{}, reject("token too large")
	}
	if p.health.stale() {
		return nil, time.Time{}, authcache.ErrNoMatch
	}
	snap := p.snap.Load()
	var chosen *liveProvider
	tok, err := parser.ParseWithClaims(token, jwt.MapClaims{}, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		c := tok.Claims.(jwt.MapClaims)
		iss, _ := c["iss"].(string)
		if kid == "" || iss == "" {
			return nil, authcache.ErrNoMatch
		}
		var (
			holders   []*liveProvider
			keys      []*rsa.PublicKey
			transient bool
		)
		for _, lp := range snap.list {
			if lp.doc == nil || !issuerMatches(lp, iss) {
				continue
			}
			pub, err := p.jwks.lookup(ctx, lp.doc.JWKSURI, kid)
			switch {
			case err == nil:
				holders = append(holders, lp)
				keys = append(keys, pub)
			case !errors.Is(err, errUnknownKid):
				transient = true
			}
		}
		switch len(holders) {
		case 0:
			if transient {
				return nil, errJWKSUnavailable
			}
			return nil, authcache.ErrNoMatch
		case 1:
			chosen = holders[0]
			return keys[0], nil
		}
		aud := audiences(c)
		if len(aud) == 0 {
			return nil, errAmbiguous
		}
		pick := -1
		for i, lp := range holders {
			if len(lp.rec.Audiences) > 0 && containsAny([]string{aud[0]}, lp.rec.Audiences) {
				if pick >= 0 {
					return nil, errAmbiguous
				}
				pick = i
			}
		}
		if pick < 0 {
			return nil, errAmbiguous
		}
		chosen = holders[pick]
		return keys[pick], nil
	})
	if err != nil {
		if errors.Is(err, authcache.ErrNoMatch) {
			return nil, time.Time{}, authcache.ErrNoMatch
		}
		return nil, time.Time{}, reject("%v", err)
	}
	c := tok.Claims.(jwt.MapClaims)
	rec := chosen.rec
	if iat, ok := numericTime(c, "iat"); ok && iat.Before(rec.CreatedAt.Add(-Leeway)) {
		return nil, time.Time{}, reject("token issued before the provider was registered")
	}
	if len(rec.Audiences) > 0 && !containsAny(audiences(c), rec.Audiences) {
		return nil, time.Time{}, reject("audience not accepted by the provider registration")
	}
	sub, _ := c["sub"].(string)
	if !validSubject(sub) {
		return nil, time.Time{}, reject("unusable sub claim")
	}
	if rec.Tenant == "" || rec.Tenant == nilUUID {
		return nil, time.Time{}, reject("provider has no owner tenant")
	}
	claim := p.cfg.RolesClaim
	if rec.RolesClaim != nil && *rec.RolesClaim != "" {
		claim = *rec.RolesClaim
	}
	exp, _ := numericTime(c, "exp")
	return &iam.Principal{Kind: "user", UserID: sub, UserName: sub, TenantID: rec.Tenant, TenantName: rec.Tenant,
		Roles: rolesFrom(c, claim)}, exp, nil
}

func issuerMatches(lp *liveProvider, iss string) bool {
	if len(lp.rec.Issuers) > 0 {
		return containsAny([]string{iss}, lp.rec.Issuers)
	}
	return iss == lp.doc.Issuer
}
