package fast

import "github.com/valyala/fasthttp"

// The token endpoint's companions, extensions beyond the wire contract:
// RFC 7662 introspection and RFC 7009 revocation. Both authenticate the
// client inside (client_secret_basic or client_secret_post), like the
// token endpoint, so their routes are Public.
const (
	introspectPath = "/oauth/introspect"
	revokePath     = "/oauth/revoke"
	introspectOpID = "introspectToken"
	revokeOpID     = "revokeToken"
)

func oauthExtHandlers(s *Server) map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{introspectOpID: s.oauthIntrospect, revokeOpID: s.oauthRevoke}
}

func oauthExtensionRoutes() []Route {
	return []Route{
		{"POST", introspectPath, introspectOpID, TagIAM, "Introspect an access token (RFC 7662)", Public, nil},
		{"POST", revokePath, revokeOpID, TagIAM, "Revoke an access token (RFC 7009)", Public, nil},
	}
}

func oauthExtensionDocs() map[string]opDoc {
	return map[string]opDoc{
		introspectOpID: {
			desc: "RFC 7662 token introspection. Authenticate as a client (HTTP Basic, or client_id and client_secret in the form). " +
				"Answers `{\"active\":false}` for a token that does not verify, is expired or revoked, or belongs to another tenant; " +
				"otherwise `active: true` with scope, client_id, username, token_type, exp, iat, sub, aud, iss, jti and tenant. " +
				"Served from the verification cache. OAuth error bodies (RFC 6749 5.2); 429 with Retry-After after too many failed " +
				"client authentications.",
			oauth: true,
			body:  formBody("The token to introspect.", ref("TokenIntrospectionRequest")),
			ok:    okJSON("The token's state.", ref("TokenIntrospection")),
		},
		revokeOpID: {
			desc: "RFC 7009 token revocation. Authenticate as the client the token was issued to. The token's jti is refused by every " +
				"verification path (HTTP, gRPC members, introspection) until the token expires, on every node once it reconciles, and " +
				"across restarts. An invalid, expired or already revoked token also gets 200. Federated tokens answer " +
				"unsupported_token_type; another client's token answers unauthorized_client.",
			oauth: true,
			body:  formBody("The token to revoke.", ref("TokenRevocationRequest")),
			ok:    okJSON("Revoked (or nothing to revoke).", &Schema{Type: SchemaType{"object"}}),
		},
	}
}

func formBody(desc string, schema *Schema) *RequestBody {
	return &RequestBody{Description: desc, Required: true, Content: content("application/x-www-form-urlencoded", schema)}
}

// noStoreHeaders documents Cache-Control: no-store on OAuth answers.
func noStoreHeaders() map[string]*Header {
	return map[string]*Header{"Cache-Control": {Description: "Always no-store.", Schema: &Schema{Type: SchemaType{"string"}}}}
}

// oauthErrorResponse is an OAuth error body (RFC 6749 section 5.2).
func oauthErrorResponse(desc string) *Response {
	return &Response{Description: desc, Headers: noStoreHeaders(), Content: content("application/json", ref("OAuthError"))}
}

// oauthCompanionResponses are the responses of introspection and
// revocation: OAuth error bodies, never problem+json.
func oauthCompanionResponses(ok *Response) map[string]*Response {
	ok.Headers = noStoreHeaders()
	unauthorized := oauthErrorResponse("invalid_client: missing or wrong client credentials.")
	unauthorized.Headers["WWW-Authenticate"] = &Header{Description: "`Basic realm=\"svc\"`.", Schema: &Schema{Type: SchemaType{"string"}}}
	return map[string]*Response{
		"200":     ok,
		"400":     oauthErrorResponse("invalid_request (token missing, or two client authentication methods), unsupported_token_type or unauthorized_client (revocation)."),
		"401":     unauthorized,
		"429":     throttledResponse(),
		"default": oauthErrorResponse("server_error (no signing key is configured), or 503 temporarily_unavailable."),
	}
}

// throttledResponse is the 429 of too many failed client authentications.
func throttledResponse() *Response {
	r := oauthErrorResponse("temporarily_unavailable: too many failed client authentications from this address or for this client id " +
		"(SVC_OAUTH_MAX_FAILURES_PER_CLIENT, SVC_OAUTH_MAX_FAILURES_PER_ADDRESS).")
	r.Headers["Retry-After"] = &Header{Description: "Seconds until the window ends.", Schema: &Schema{Type: SchemaType{"integer"}}}
	return r
}

// withOAuthSchemas adds the schemas of introspection and revocation.
func withOAuthSchemas(m map[string]*Schema) map[string]*Schema {
	m["TokenIntrospectionRequest"] = obj("RFC 7662 introspection request; add client_id and client_secret for client_secret_post.", Props{
		"token":           str("The access token."),
		"token_type_hint": str("Ignored: every token svc accepts is an access token."),
		"client_id":       str("client_secret_post only."),
		"client_secret":   str("client_secret_post only."),
	}, "token")
	m["TokenRevocationRequest"] = obj("RFC 7009 revocation request; add client_id and client_secret for client_secret_post.", Props{
		"token":           str("The access token."),
		"token_type_hint": str("Ignored."),
		"client_id":       str("client_secret_post only."),
		"client_secret":   str("client_secret_post only."),
	}, "token")
	m["TokenIntrospection"] = obj("RFC 7662 introspection response. Only `active` when the token is not active.", Props{
		"active":     boolean("Whether the token verifies now (signature, expiry, revocation) and belongs to the asking client's tenant."),
		"scope":      str("The token's roles, space-separated."),
		"client_id":  str("The client the token was issued to."),
		"username":   str("The bound user."),
		"token_type": enum("", "Bearer"),
		"exp":        integer("int64", "Expiry, seconds since the epoch."),
		"iat":        integer("int64", "Issued at."),
		"nbf":        integer("int64", "Not before."),
		"sub":        str("Subject."),
		"aud":        str("Audience."),
		"iss":        str("Issuer."),
		"jti":        str("Token id."),
		"tenant":     str("Tenant of the token (svc extension)."),
	}, "active")
	return m
}
