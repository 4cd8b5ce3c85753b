package fast

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/config"
	"svc/platform/throttle"
	"svc/storage"
)

// Client authentication of the OAuth endpoints (token, introspection,
// revocation): client_secret_basic or client_secret_post (RFC 6749
// 2.3.1), never both. Descriptions say what is wrong with the request
// itself (which field is missing, which method was mixed) but never
// whether a client id exists: an unknown id and a wrong secret get the
// same answer.
const (
	descClientAuthFailed = "client authentication failed"
	descNoClientAuth     = "client authentication required: send HTTP Basic credentials (client_secret_basic) " +
		"or client_id and client_secret in the form body (client_secret_post)"
	descMalformedBasic = "malformed HTTP Basic credentials: expected base64 of client_id:client_secret, " +
		"each form-urlencoded"
	descTwoMethods = "more than one client authentication method: send either HTTP Basic credentials " +
		"or client_id and client_secret in the form body, not both"
	descSecretInQuery  = "client_secret must be sent in the request body, never in the URL"
	descMissingSecret  = "client_secret is required with client_id (public clients are not supported)"
	descMissingID      = "client_id is required with client_secret"
	descOtherAuthority = "unsupported Authorization scheme at this endpoint: use Basic, or client_id and client_secret in the form body"
)

// clientAuthError is a refusal of client authentication: status, OAuth
// error code and description.
type clientAuthError struct {
	status int
	code   string
	desc   string
}

// presentedCredentials reads the client's credentials from the request
// without checking them. id is what the request claims (for the limiter)
// even when the request is refused.
func presentedCredentials(ctx *fasthttp.RequestCtx) (id, secret string, cerr *clientAuthError) {
	hdr := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	postID, hasPostID := bodyValue(ctx, "client_id")
	postSecret, hasPostSecret := bodyValue(ctx, "client_secret")
	if ctx.QueryArgs().Has("client_secret") {
		return "", "", &clientAuthError{400, "invalid_request", descSecretInQuery}
	}
	if len(bytes.TrimSpace(hdr)) > 0 {
		if !isBasicScheme(hdr) {
			return "", "", &clientAuthError{401, "invalid_client", descOtherAuthority}
		}
		id, secret, ok := basicCredentials(hdr)
		if !ok {
			return "", "", &clientAuthError{401, "invalid_client", descMalformedBasic}
		}
		// client_id in the body beside Basic is tolerated when it names
		// the same client (some libraries always send it); a secret in
		// the body is a second method.
		if hasPostSecret || (hasPostID && postID != id) {
			return id, "", &clientAuthError{400, "invalid_request", descTwoMethods}
		}
		return id, secret, nil
	}
	switch {
	case !hasPostID && !hasPostSecret:
		return "", "", &clientAuthError{401, "invalid_client", descNoClientAuth}
	case !hasPostSecret:
		return postID, "", &clientAuthError{401, "invalid_client", descMissingSecret}
	case !hasPostID:
		return "", "", &clientAuthError{401, "invalid_client", descMissingID}
	}
	return postID, postSecret, nil
}

func isBasicScheme(h []byte) bool {
	h = bytes.TrimSpace(h)
	return len(h) >= 6 && bytes.EqualFold(h[:6], []byte("basic "))
}

// bodyValue reads a field of the form body only (urlencoded or multipart),
// never the query string: credentials do not belong in URLs.
func bodyValue(ctx *fasthttp.RequestCtx, key string) (string, bool) {
	if v := ctx.PostArgs().Peek(key); v != nil {
		return string(v), true
	}
	if bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("multipart/form-data")) {
		if f, err := ctx.MultipartForm(); err == nil {
			if v := f.Value[key]; len(v) > 0 {
				return v[0], true
			}
		}
	}
	return "", false
}

// authenticateClient authenticates the calling client, throttling failed
// attempts per claimed client id and per address. On refusal it has
// written the OAuth error and returns nil.
func (s *Server) authenticateClient(ctx *fasthttp.RequestCtx, d *IAMDeps) *storage.M2MClient {
	id, secret, cerr := presentedCredentials(ctx)
	addr := throttle.AddressKey(ctx.RemoteIP())
	now := time.Now()
	if wait, ok := s.clientAuthLimit.Allow(id, addr, now); !ok {
		secs := int64((wait + time.Second - 1) / time.Second)
		ctx.Response.Header.Set("Retry-After", strconv.FormatInt(secs, 10))
		writeOAuthError(ctx, 429, "temporarily_unavailable",
			"too many failed client authentications; retry after "+strconv.FormatInt(secs, 10)+" seconds")
		return nil
	}
	if cerr != nil {
		if cerr.status == 401 {
			s.clientAuthLimit.Fail(id, addr, now)
		}
		writeOAuthError(ctx, cerr.status, cerr.code, cerr.desc)
		return nil
	}
	client, err := d.Clients.Authenticate(dctx(ctx), id, secret)
	if errors.Is(err, iam.ErrInvalidClient) {
		s.clientAuthLimit.Fail(id, addr, now)
		writeOAuthError(ctx, 401, "invalid_client", descClientAuthFailed)
		return nil
	}
	if err != nil {
		s.log.Error("oauth: client lookup", "err", err)
		writeOAuthError(ctx, 500, "server_error", "server_error")
		return nil
	}
	s.clientAuthLimit.Succeed(id, addr, now)
	return client
}

// newClientAuthLimiter builds the limiter from SVC_OAUTH_MAX_FAILURES_*.
func newClientAuthLimiter(cfg *config.Config) *throttle.Limiter {
	return throttle.New(throttle.Limits{PerClient: cfg.OAuthMaxFailuresPerClient,
		PerAddress: cfg.OAuthMaxFailuresPerAddress, Window: cfg.OAuthFailureWindow})
}
