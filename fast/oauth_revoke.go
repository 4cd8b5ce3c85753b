package fast

import (
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"svc/authcache"
	"svc/storage"
)

// oauthRevoke is POST {ctx}/oauth/revoke (RFC 7009), an extension: a
// client revokes an access token that was issued to it. The jti is
// persisted and refused by every verification path (HTTP, gRPC members,
// introspection, token exchange) until the token would have lapsed.
//
// As RFC 7009 2.2 asks, a token that is invalid, expired or already
// revoked is answered 200 like a successful revocation: the client's
// purpose is achieved either way.
func (s *Server) oauthRevoke(ctx *fasthttp.RequestCtx) {
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
	p, info, err := d.Tokens.Inspect(dctx(ctx), []byte(tok))
	if err != nil {
		revoked(ctx)
		return
	}
	if !info.Own || info.JTI == "" {
		writeOAuthError(ctx, 400, "unsupported_token_type",
			"only access tokens svc issued (with a jti) can be revoked here; revoke federated tokens at their issuer")
		return
	}
	if p.TenantID != client.Tenant || tokenClient(payloadClaims(tok), p) != client.ClientID {
		writeOAuthError(ctx, 400, "unauthorized_client", "the token was not issued to this client")
		return
	}
	err = d.Tokens.Revoke(dctx(ctx), &storage.RevokedToken{JTI: info.JTI, Tenant: p.TenantID, ClientID: client.ClientID,
		Until: info.Until, RevokedAt: time.Now().UTC()})
	if err != nil && !errors.Is(err, authcache.ErrNotRevocable) {
		s.log.Error("oauth: revoke", "err", err)
		// RFC 7009 2.2.1: the client may retry later.
		ctx.Response.Header.Set("Retry-After", "1")
		writeOAuthError(ctx, 503, "temporarily_unavailable", "the revocation could not be stored; retry")
		return
	}
	revoked(ctx)
}

func revoked(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(200)
	noStore(ctx)
	ctx.SetContentType("application/json")
	ctx.SetBodyString("{}")
}
