package fast

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math/big"
	"net/url"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/authcache"
	"svc/iam"
	"svc/platform/apierr"
	"svc/storage"
)

// IAMDeps are the jwt-mode services. Nil in mock mode: the token endpoint
// then answers server_error and the admin operations stay 501.
type IAMDeps struct {
	Clients *iam.Clients
	Keys    *iam.Keys
	Issuer  *iam.Issuer
	// Subjects verifies token-exchange subject tokens through the whole
	// verification chain.
	Subjects SubjectVerifier
	// Stale reports whether the key caches fail closed (JWKS answers 503).
	Stale func(time.Time) bool
	// Tokens backs introspection and revocation; nil leaves both
	// answering server_error.
	Tokens TokenInspector
}

// TokenInspector verifies tokens for introspection and records
// revocations (authcache.Cache).
type TokenInspector interface {
	Inspect(ctx context.Context, token []byte) (*iam.Principal, *authcache.TokenInfo, error)
	Revoke(ctx context.Context, r *storage.RevokedToken) error
}

// SubjectVerifier verifies a subject token of RFC 8693 token exchange.
type SubjectVerifier interface {
	VerifySubject(ctx context.Context, token string) (*iam.Principal, error)
}

func oauthHandlers(s *Server) map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"getTechnicalUserToken": s.oauthToken}
}

// maxTokenRequestBytes caps the token endpoint's form body.
const maxTokenRequestBytes = 1 << 20

// mountOAuthExtras adds what the route table does not describe: JWKS, the
// RFC 8414 metadata (oauth_metadata.go), and OAuth-shaped 405s for other
// methods on the token endpoint and its companions.
func (s *Server) mountOAuthExtras(r *router.Router, cp string) {
	r.GET(cp+"/.well-known/jwks.json", s.instrument("/.well-known/jwks.json", s.jwks))
	r.GET(cp+metadataPath, s.instrument(metadataPath, s.oauthMetadata))
	r.GET(cp+oidcMetadataPath, s.instrument(oidcMetadataPath, s.oauthMetadata))
	if cp != "" {
		// RFC 8414 3.1: a client that knows the issuer finds the metadata
		// at the origin's /.well-known/oauth-authorization-server followed
		// by the issuer's path; libraries that never add a path look at
		// the bare root location, so both serve the same document.
		r.GET(metadataPath, s.instrument(metadataPath, s.oauthMetadata))
		r.GET(metadataPath+cp, s.instrument(metadataPath+"{ctx}", s.oauthMetadata))
		r.GET(oidcMetadataPath, s.instrument(oidcMetadataPath, s.oauthMetadata))
	}
	for _, p := range []string{"/oauth/token", introspectPath, revokePath} {
		for _, m := range []string{"GET", "PUT", "DELETE", "PATCH"} {
			r.Handle(m, cp+p, s.instrument(p, func(ctx *fasthttp.RequestCtx) {
				ctx.Response.Header.Set("Allow", "POST")
				writeOAuthError(ctx, 405, "method_not_allowed", "method_not_allowed")
			}))
		}
	}
}

// writeOAuthError writes an RFC 6749 error body (docs/decisions/0005-token-endpoint.md).
func writeOAuthError(ctx *fasthttp.RequestCtx, status int, code, desc string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	noStore(ctx)
	if status == 401 {
		ctx.Response.Header.Set("WWW-Authenticate", `Basic realm="svc"`)
	}
	b := make([]byte, 0, 96)
	b = append(b, `{"error":`...)
	b = appendJSONString(b, code)
	b = append(b, `,"error_description":`...)
	b = appendJSONString(b, desc)
	b = append(b, '}')
	ctx.SetBody(b)
}

func noStore(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("Pragma", "no-cache")
}

// basicCredentials parses HTTP Basic client authentication: scheme
// case-insensitive, standard padded base64, split on the first ':', both
// halves form-URL-decoded (RFC 6749 2.3.1).
func basicCredentials(h []byte) (id, secret string, ok bool) {
	h = bytes.TrimSpace(h)
	if len(h) < 6 || !bytes.EqualFold(h[:6], []byte("basic ")) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(string(bytes.TrimSpace(h[6:])))
	if err != nil {
		return "", "", false
	}
	i := bytes.IndexByte(raw, ':')
	if i < 0 {
		return "", "", false
	}
	id, err1 := url.QueryUnescape(string(raw[:i]))
	secret, err2 := url.QueryUnescape(string(raw[i+1:]))
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	return id, secret, true
}

// formValue reads a form field as clients expect (docs/decisions/0005-token-endpoint.md): the body
// (urlencoded or multipart) wins over the query string; the first of
// repeated keys counts.
func formValue(ctx *fasthttp.RequestCtx, key string) string {
	if v := ctx.PostArgs().Peek(key); v != nil {
		return string(v)
	}
	if bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("multipart/form-data")) {
		if f, err := ctx.MultipartForm(); err == nil {
			if v := f.Value[key]; len(v) > 0 {
				return v[0]
			}
		}
	}
	return string(ctx.QueryArgs().Peek(key))
}

// oauthToken is POST {ctx}/oauth/token: client authentication first
// (client_secret_basic or client_secret_post, oauth_clientauth.go), so bad
// credentials beat a bad grant (docs/decisions/0005-token-endpoint.md).
func (s *Server) oauthToken(ctx *fasthttp.RequestCtx) {
	d := s.deps.IAM
	if d == nil {
		writeOAuthError(ctx, 500, "server_error", "no signing key is configured (SVC_IAM_MODE is not jwt)")
		return
	}
	if len(ctx.PostBody()) > maxTokenRequestBytes {
		writeOAuthError(ctx, 400, "invalid_request", "request body too large")
		return
	}
	client := s.authenticateClient(ctx, d)
	if client == nil {
		return
	}
	switch grant := formValue(ctx, "grant_type"); grant {
	case "":
		writeOAuthError(ctx, 400, "invalid_request", "grant_type is required")
	case iam.GrantClientCredentials:
		tok, err := d.Issuer.ClientCredentials(client)
		s.writeToken(ctx, tok, err, false)
	case iam.GrantTokenExchange:
		s.tokenExchange(ctx, d, client)
	default:
		writeOAuthError(ctx, 400, "unsupported_grant_type", "this grant_type is not supported; supported: "+
			iam.GrantClientCredentials+", "+iam.GrantTokenExchange)
	}
}

func (s *Server) tokenExchange(ctx *fasthttp.RequestCtx, d *IAMDeps, client *storage.M2MClient) {
	subject := formValue(ctx, "subject_token")
	typ := formValue(ctx, "subject_token_type")
	switch {
	case subject == "":
		writeOAuthError(ctx, 400, "invalid_request", "subject_token is required")
		return
	case typ == "":
		writeOAuthError(ctx, 400, "invalid_request", "subject_token_type is required")
		return
	case typ != iam.TokenTypeJWT:
		writeOAuthError(ctx, 400, "invalid_grant", "unsupported subject_token_type")
		return
	}
	p, err := d.Subjects.VerifySubject(dctx(ctx), subject)
	if err != nil {
		writeOAuthError(ctx, 400, "invalid_grant", "invalid subject token")
		return
	}
	if p.TenantID != client.Tenant {
		writeOAuthError(ctx, 403, "access_denied", "tenant mismatch")
		return
	}
	tok, err := d.Issuer.OnBehalfOf(client, p)
	s.writeToken(ctx, tok, err, true)
}

func (s *Server) writeToken(ctx *fasthttp.RequestCtx, tok string, err error, exchanged bool) {
	if err != nil {
		if !errors.Is(err, iam.ErrNoSigner) {
			s.log.Error("token endpoint: signing", "err", err)
		}
		writeOAuthError(ctx, 500, "server_error", "server_error")
		return
	}
	b := make([]byte, 0, len(tok)+128)
	b = append(b, `{"access_token":"`...)
	b = append(b, tok...) // base64url and dots: nothing to escape
	b = append(b, `","token_type":"Bearer","expires_in":`...)
	b = strconv.AppendInt(b, int64(s.deps.IAM.Issuer.ExpiresIn()), 10)
	if exchanged {
		b = append(b, `,"issued_token_type":"`+iam.TokenTypeJWT+`"`...)
	}
	b = append(b, '}')
	ctx.SetContentType("application/json")
	noStore(ctx)
	ctx.SetBody(b)
}

// jwks is GET {ctx}/.well-known/jwks.json: exactly the keypairs that
// verify now, any audience. Trusted keys are never published.
func (s *Server) jwks(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	d := s.deps.IAM
	if d == nil {
		ctx.SetBodyString(`{"keys":[]}`)
		return
	}
	now := time.Now()
	if d.Stale != nil && d.Stale(now) {
		s.writeProblem(ctx, &Problem{Code: apierr.ServiceUnavailable, Message: "signing keys could not be refreshed", Retryable: true})
		return
	}
	b := append(make([]byte, 0, 1024), `{"keys":[`...)
	for i, k := range d.Keys.Ring().Published(now) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"kty":"RSA","kid":`...)
		b = appendJSONString(b, k.KID)
		b = append(b, `,"use":"sig","alg":"RS256","n":"`...)
		b = base64.RawURLEncoding.AppendEncode(b, k.Public.N.Bytes())
		b = append(b, `","e":"`...)
		b = base64.RawURLEncoding.AppendEncode(b, big.NewInt(int64(k.Public.E)).Bytes())
		b = append(b, `"}`...)
	}
	b = append(b, "]}"...)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=60")
	ctx.SetBody(b)
}

// writeIAMProblem renders an error of an IAM service: an *apierr.Error
// with its code's status (a parameter named in properties), anything else
// as 500 with a ticket. It is writeError; the name stays for the IAM
// handlers' call sites.
func (s *Server) writeIAMProblem(ctx *fasthttp.RequestCtx, err error) {
	s.writeError(ctx, err)
}
