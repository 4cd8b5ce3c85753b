package fast

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/iam"
)

// oauthIntrospect is POST {ctx}/oauth/introspect (RFC 7662), an
// extension: a client of a tenant asks whether a token is active. The
// token is verified through the same chain and verified-token cache as
// every API request, revocations included; a token that does not verify,
// or belongs to another tenant than the asking client, is just
// {"active":false} (RFC 7662 2.2: no reason is given).
func (s *Server) oauthIntrospect(ctx *fasthttp.RequestCtx) {
	d := s.tokenDeps(ctx)
	if d == nil {
		return
	}
	client := s.authenticateClient(ctx, d)
	if client == nil {
		return
	}
	tok, ok := bodyValue(ctx, "token")
	if !ok || tok == "" {
		writeOAuthError(ctx, 400, "invalid_request", "token is required")
		return
	}
	// token_type_hint is only a hint (RFC 7662 2.1); every token svc
	// accepts is an access token.
	p, info, err := d.Tokens.Inspect(dctx(ctx), []byte(tok))
	ctx.SetContentType("application/json")
	noStore(ctx)
	if err != nil || p.TenantID != client.Tenant {
		ctx.SetBodyString(`{"active":false}`)
		return
	}
	c := payloadClaims(tok)
	b := make([]byte, 0, 512)
	b = append(b, `{"active":true`...)
	if len(p.Roles) > 0 {
		b = appendField(b, "scope", strings.Join(p.Roles, " "))
	}
	if cid := tokenClient(c, p); cid != "" {
		b = appendField(b, "client_id", cid)
	}
	b = appendField(b, "username", p.UserName)
	b = appendField(b, "token_type", "Bearer")
	b = appendNumber(b, "exp", c.Exp)
	b = appendNumber(b, "iat", c.Iat)
	b = appendNumber(b, "nbf", c.Nbf)
	b = appendField(b, "sub", c.Sub)
	if aud := c.audience(); aud != "" {
		b = appendField(b, "aud", aud)
	}
	b = appendField(b, "iss", c.Iss)
	b = appendField(b, "jti", info.JTI)
	b = appendField(b, "tenant", p.TenantID)
	b = append(b, '}')
	ctx.SetBody(b)
}

// tokenDeps returns the IAM services of the token companions, or answers
// 500 server_error in mock mode (as the token endpoint does).
func (s *Server) tokenDeps(ctx *fasthttp.RequestCtx) *IAMDeps {
	d := s.deps.IAM
	if d == nil || d.Tokens == nil {
		writeOAuthError(ctx, 500, "server_error", "no signing key is configured (SVC_IAM_MODE is not jwt)")
		return nil
	}
	if len(ctx.PostBody()) > maxTokenRequestBytes {
		writeOAuthError(ctx, 400, "invalid_request", "request body too large")
		return nil
	}
	return d
}

// tokenClaims are the claims introspection echoes, read from the payload
// of a token that has already verified.
type tokenClaims struct {
	Sub string          `json:"sub"`
	Iss string          `json:"iss"`
	Aud json.RawMessage `json:"aud"`
	Exp json.Number     `json:"exp"`
	Iat json.Number     `json:"iat"`
	Nbf json.Number     `json:"nbf"`
	Act *iam.Actor      `json:"act"`
	Azp string          `json:"azp"`
}

// payloadClaims decodes the payload of a verified token; a claim of an
// unexpected type is left empty rather than failing introspection.
func payloadClaims(tok string) tokenClaims {
	var c tokenClaims
	parts := strings.SplitN(tok, ".", 3)
	if len(parts) != 3 {
		return c
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&c) != nil {
		// Decode field by field is not worth it: fall back to the
		// string claims alone.
		var loose struct {
			Sub string `json:"sub"`
			Iss string `json:"iss"`
		}
		_ = json.Unmarshal(raw, &loose)
		return tokenClaims{Sub: loose.Sub, Iss: loose.Iss}
	}
	return c
}

// audience is aud as one string: a string claim, or the first element.
func (c tokenClaims) audience() string {
	var s string
	if json.Unmarshal(c.Aud, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(c.Aud, &l) == nil && len(l) > 0 {
		return l[0]
	}
	return ""
}

// tokenClient is the client a token was issued to: the actor of an
// on-behalf-of token, the subject of a client-credentials token, the azp
// of a federated one.
func tokenClient(c tokenClaims, p *iam.Principal) string {
	switch {
	case c.Act != nil && c.Act.Sub != "":
		return c.Act.Sub
	case p.Kind == "service":
		return c.Sub
	}
	return c.Azp
}

func appendField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return appendJSONString(b, v)
}

func appendNumber(b []byte, key string, n json.Number) []byte {
	v, err := n.Int64()
	if err != nil {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}
