package fast

import (
	"github.com/valyala/fasthttp"

	"svc/iam"
)

// RFC 8414 authorization server metadata. The same document is served at
// {ctx}/.well-known/oauth-authorization-server and, for clients that only
// look there, {ctx}/.well-known/openid-configuration; both sit under the
// context path like {ctx}/.well-known/jwks.json (docs/decisions/0005-token-endpoint.md), and need
// no token. Endpoint URLs are absolute, built from this request's scheme
// and Host the way /openapi.json builds servers[0].url.
const (
	metadataPath     = "/.well-known/oauth-authorization-server"
	oidcMetadataPath = "/.well-known/openid-configuration"
)

// authMethods are the token_endpoint_auth_methods_supported (and those of
// introspection and revocation), RFC 6749 2.3.1.
var authMethods = []string{"client_secret_basic", "client_secret_post"}

func (s *Server) oauthMetadata(ctx *fasthttp.RequestCtx) {
	base := s.requestBase(ctx)
	b := make([]byte, 0, 1024)
	b = append(b, `{"issuer":`...)
	b = appendJSONString(b, s.cfg.JWTIssuer)
	b = appendEndpoint(b, "token_endpoint", base, "/oauth/token")
	b = appendEndpoint(b, "jwks_uri", base, "/.well-known/jwks.json")
	b = appendEndpoint(b, "introspection_endpoint", base, "/oauth/introspect")
	b = appendEndpoint(b, "revocation_endpoint", base, "/oauth/revoke")
	b = appendStrings(b, "grant_types_supported", []string{iam.GrantClientCredentials, iam.GrantTokenExchange})
	b = appendStrings(b, "token_endpoint_auth_methods_supported", authMethods)
	b = appendStrings(b, "introspection_endpoint_auth_methods_supported", authMethods)
	b = appendStrings(b, "revocation_endpoint_auth_methods_supported", authMethods)
	// svc has no authorization endpoint: no response type is supported.
	b = appendStrings(b, "response_types_supported", []string{})
	b = appendStrings(b, "token_endpoint_auth_signing_alg_values_supported", []string{"RS256"})
	b = appendStrings(b, "subject_token_types_supported", []string{iam.TokenTypeJWT})
	b = appendEndpoint(b, "service_documentation", s.requestOrigin(ctx), "/docs")
	b = append(b, '}')
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "public, max-age=60")
	ctx.SetBody(b)
}

// requestOrigin is {scheme}://{host} of this request; a Host header that is
// not a plain host[:port] is replaced by localhost, as in /openapi.json.
func (s *Server) requestOrigin(ctx *fasthttp.RequestCtx) string {
	host := ctx.Host()
	if len(host) == 0 || !urlSafeHost(host) {
		host = s2b("localhost")
	}
	if ctx.IsTLS() {
		return "https://" + string(host)
	}
	return "http://" + string(host)
}

// requestBase is the origin plus the context path.
func (s *Server) requestBase(ctx *fasthttp.RequestCtx) string {
	return s.requestOrigin(ctx) + s.cfg.ContextPath
}

func appendEndpoint(b []byte, key, base, path string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return appendJSONString(b, base+path)
}

func appendStrings(b []byte, key string, vs []string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v)
	}
	return append(b, ']')
}
