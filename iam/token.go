package iam

import (
	"errors"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"svc/storage"
)

// Token types and grants of the token endpoint (RFC 6749, RFC 8693).
const (
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
	tierUnlimited          = "unlimited"
)

// ErrNoSigner: no keypair may sign machine tokens now (for example the
// bootstrap key has audience human and no client keypair exists).
var ErrNoSigner = errors.New("iam: no active client keypair signs tokens")

// Actor is the act claim of an on-behalf-of token.
type Actor struct {
	Sub string `json:"sub"`
}

// issuedClaims are the claims of an issued token (docs/decisions/0006-tokens-keypairs-clients.md); field order is the
// wire order.
type issuedClaims struct {
	Sub       string   `json:"sub"`
	Iss       string   `json:"iss"`
	Aud       string   `json:"aud,omitempty"`
	Exp       int64    `json:"exp"`
	Iat       int64    `json:"iat"`
	Jti       string   `json:"jti"`
	OrgID     string   `json:"caas_org_id"`
	UserID    string   `json:"caas_user_id"`
	UserRoles []string `json:"user_roles"`
	Scopes    []string `json:"scopes,omitempty"`
	Tier      string   `json:"caas_tier"`
	Act       *Actor   `json:"act,omitempty"`
}

func (c *issuedClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.Exp, 0)), nil
}
func (c *issuedClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.Iat, 0)), nil
}
func (c *issuedClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (c *issuedClaims) GetIssuer() (string, error)              { return c.Iss, nil }
func (c *issuedClaims) GetSubject() (string, error)             { return c.Sub, nil }
func (c *issuedClaims) GetAudience() (jwt.ClaimStrings, error) {
	if c.Aud == "" {
		return nil, nil
	}
	return jwt.ClaimStrings{c.Aud}, nil
}

// Issuer signs svc's access tokens.
type Issuer struct {
	keys     *Keys
	issuer   string
	audience string
	expiry   time.Duration
	now      func() time.Time
}

// NewIssuer builds the token issuer from SVC_JWT_ISSUER, SVC_JWT_AUDIENCE
// and SVC_JWT_EXPIRY_SECONDS.
func NewIssuer(keys *Keys, issuer, audience string, expirySeconds int) *Issuer {
	return &Issuer{keys: keys, issuer: issuer, audience: audience,
		expiry: time.Duration(expirySeconds) * time.Second, now: time.Now}
}

// ExpiresIn is the expires_in of every token response.
func (i *Issuer) ExpiresIn() int { return int(i.expiry / time.Second) }

// ClientCredentials signs a machine token for c: sub = client id, roles in
// both user_roles and scopes (docs/decisions/0006-tokens-keypairs-clients.md), no act.
func (i *Issuer) ClientCredentials(c *storage.M2MClient) (string, error) {
	roles := c.Roles
	if roles == nil {
		roles = []string{}
	}
	user := c.UserID
	if user == "" {
		user = c.ClientID
	}
	return i.sign(&issuedClaims{Sub: c.ClientID, OrgID: c.Tenant, UserID: user, UserRoles: roles, Scopes: roles})
}

// OnBehalfOf signs an RFC 8693 token for subject, acted by client. The
// caller has checked that subject belongs to the client's tenant.
func (i *Issuer) OnBehalfOf(client *storage.M2MClient, subject *Principal) (string, error) {
	sub := subject.Subject
	if sub == "" {
		sub = subject.UserName
	}
	roles := subject.Roles
	if roles == nil {
		roles = []string{}
	}
	return i.sign(&issuedClaims{Sub: sub, OrgID: subject.TenantID, UserID: sub, UserRoles: roles,
		Act: &Actor{Sub: client.ClientID}})
}

func (i *Issuer) sign(c *issuedClaims) (string, error) {
	now := i.now()
	k := i.keys.Ring().Signer(AudienceClient, now)
	if k == nil {
		return "", ErrNoSigner
	}
	c.Iss, c.Aud, c.Tier = i.issuer, i.audience, tierUnlimited
	c.Iat = now.Unix()
	c.Exp = now.Add(i.expiry).Unix()
	c.Jti = uuid.NewString()
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	t.Header["kid"] = k.KID
	return t.SignedString(k.Private)
}

// InboundClaims are the claims svc reads from a first-party token.
// user_roles, scopes and act stay raw: their presence decides the
// principal's kind (docs/decisions/0007-bearer-verification.md).
type InboundClaims struct {
	jwt.RegisteredClaims
	// Raw so a foreign token whose claims have other types still parses
	// far enough to fall through to the next verifier.
	OrgID     json.RawMessage `json:"caas_org_id"`
	UserID    json.RawMessage `json:"caas_user_id"`
	UserRoles json.RawMessage `json:"user_roles"`
	Scopes    json.RawMessage `json:"scopes"`
	Act       json.RawMessage `json:"act"`
}

var errBadClaims = errors.New("iam: token claims do not bind a principal")

// Principal binds the request context of a verified first-party token:
// user from caas_user_id (else sub), tenant from caas_org_id (required),
// roles from user_roles when non-empty else scopes, kind service for a
// machine token (scopes without act), user otherwise.
func (c *InboundClaims) Principal() (*Principal, error) {
	org := stringOf(c.OrgID)
	if org == "" || c.IssuedAt == nil {
		return nil, errBadClaims
	}
	user := c.Subject
	if u := stringOf(c.UserID); u != "" {
		user = u
	}
	if user == "" {
		return nil, errBadClaims
	}
	roles := stringElems(c.UserRoles)
	if len(roles) == 0 {
		roles = stringElems(c.Scopes)
	}
	kind := "user"
	if present(c.Scopes) && !present(c.Act) {
		kind = "service"
	}
	return &Principal{Kind: kind, Subject: c.Subject, UserID: user, UserName: user,
		TenantID: org, TenantName: org, Roles: roles}, nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// stringElems returns the string elements of a JSON array; anything else
// gives no roles.
func stringElems(raw json.RawMessage) []string {
	if !present(raw) || raw[0] != '[' {
		return nil
	}
	var elems []any
	if json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	var out []string
	for _, e := range elems {
		if s, ok := e.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// stringOf is the value of a JSON string claim, "" for anything else.
func stringOf(raw json.RawMessage) string {
	if !present(raw) || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
