package fast

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// tagGroups are the API's tag groups, in the order clients know (docs/decisions/0027-discovery-and-help.md).
var tagGroups = []struct{ name, desc string }{
	{TagEntity, "/entity/: create, update, delete, transition, stats"},
	{TagModel, "/model/: import, export, lock, unlock, delete, changeLevel, workflow"},
	{TagSearch, "/search/: snapshot and direct search"},
	{TagAccount, "/account/: account info, subscriptions"},
	{TagMachine, "/clients/: machine-to-machine client management"},
	{TagAudit, "/audit/: audit log retrieval"},
	{TagMessage, "/message/: message CRUD"},
	{TagIAM, "/oauth/: token, key management, OIDC providers"},
	{TagSQL, "/sql/schema/: SQL schema generation and management"},
	{TagPlatform, "/platform-api/stream-data/: stream-data operations"},
}

const tokenOpID = "getTechnicalUserToken"

// openAPISpec builds the document from the route table; per-operation
// detail comes from opDocTable, keyed by operation id.
func openAPISpec(routes []Route) *Document {
	docs := opDocTable()
	params := pathParamDocs()
	paths := map[string]*PathItem{}
	for _, r := range routes {
		item := paths[r.Path]
		if item == nil {
			item = &PathItem{}
			paths[r.Path] = item
		}
		item.set(r.Method, operation(r, docs[r.OpID], params))
	}
	tags := make([]Tag, 0, len(tagGroups))
	for _, t := range tagGroups {
		tags = append(tags, Tag{Name: t.name, Description: t.desc})
	}
	return &Document{
		OpenAPI: "3.1.0",
		Info: Info{
			Title:   "svc",
			Version: "1.0",
			Description: "svc entity service: entities described by entity models, workflows, search, audit and " +
				"messaging, plus an OAuth 2.0 authorization server.\n\n" +
				"Send `Authorization: Bearer <token>` on every operation except the token endpoint; get a token from " +
				"`POST /oauth/token` with a machine client's credentials. Errors are RFC 9457 problem details " +
				"(`application/problem+json`) carrying `properties.errorCode`.",
		},
		Servers:  []DocServer{{URL: serverURLMarker, Description: "This svc instance"}},
		Tags:     tags,
		Security: []SecurityRequirement{{"bearerAuth": []string{}}},
		Paths:    paths,
		Components: Components{
			SecuritySchemes: map[string]*SecurityScheme{
				"bearerAuth": {Type: "http", Scheme: "bearer", BearerFormat: "JWT",
					Description: "An RS256 JWT issued by svc, by a registered OIDC provider, or signed with a registered trusted key."},
				"basicAuth": {Type: "http", Scheme: "basic",
					Description: "Machine client credentials (`client_id:client_secret`) for the token endpoint."},
			},
			Schemas:   withOAuthSchemas(componentSchemas()),
			Responses: sharedResponses(),
		},
	}
}

func operation(r Route, d opDoc, pathDocs map[string]pathParamDoc) *DocOperation {
	op := &DocOperation{
		OperationID: r.OpID,
		Tags:        []string{r.Tag},
		Summary:     r.Summary,
	}
	desc := d.desc
	if isExtension(r.OpID) {
		op.Extension = true
		desc = strings.TrimSpace(extensionDescription + " " + desc)
	}
	if r.Access == Admin {
		desc = strings.TrimSpace(desc + " Requires the ROLE_ADMIN role.")
	}
	op.Description = desc

	var ps []*Parameter
	for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
		name := m[1]
		pd, known := pathDocs[name]
		schema := pd.schema
		if s, ok := d.pathSchemas[name]; ok {
			schema = s
		}
		if !known && schema == nil {
			schema = &Schema{Type: SchemaType{"string"}}
		}
		ps = append(ps, param("path", name, pd.desc, schema, true))
	}
	ps = append(ps, d.params...)
	if idempotentOps[r.OpID] {
		ps = append(ps, idempotencyKeyParam())
	}
	op.Parameters = ps

	if r.OpID == tokenOpID {
		op.RequestBody = tokenRequestBody()
	} else if d.body != nil {
		op.RequestBody = d.body
	}

	switch {
	case r.OpID == tokenOpID || d.oauth:
		op.Security = &[]SecurityRequirement{{"basicAuth": []string{}}}
	case r.Access == Public:
		op.Security = &[]SecurityRequirement{}
	}

	op.Responses = responses(r, d)
	return op
}

// responses lists the success response, the operation's own errors, and
// the errors every route of its access level can give.
func responses(r Route, d opDoc) map[string]*Response {
	resp := map[string]*Response{}
	if r.OpID == tokenOpID {
		resp = tokenResponses()
	} else if d.oauth {
		resp = oauthCompanionResponses(d.ok)
	} else {
		ok := d.ok
		if ok == nil {
			ok = okJSON("OK", anyJSON(""))
		}
		resp["200"] = ok
		resp["default"] = sharedRef("ServerError")
	}

	byStatus := map[int][]string{}
	var order []int
	for _, er := range d.errs {
		if _, seen := byStatus[er.status]; !seen {
			order = append(order, er.status)
		}
		byStatus[er.status] = append(byStatus[er.status], er.desc)
	}
	sort.Ints(order)
	for _, st := range order {
		descs := byStatus[st]
		desc := descs[0]
		if len(descs) > 1 {
			desc = "- " + strings.Join(descs, "\n- ")
		}
		resp[strconv.Itoa(st)] = problemResponse(desc)
	}

	if r.Access != Public {
		resp["401"] = sharedRef("Unauthorized")
	}
	if r.Access == Admin {
		resp["403"] = sharedRef("Forbidden")
	}
	if _, declared := resp["501"]; !declared {
		switch {
		case r.Handler == nil:
			resp["501"] = sharedRef("NotImplemented")
		case d.mock501:
			resp["501"] = problemResponse("NOT_IMPLEMENTED: not available while SVC_IAM_MODE=mock.")
		}
	}
	return resp
}

// sharedRef is a reference to a response of components.responses.
func sharedRef(name string) *Response { return &Response{Ref: "#/components/responses/" + name} }

func tokenRequestBody() *RequestBody {
	return &RequestBody{
		Description: "Form fields of the grant.",
		Required:    true,
		Content:     content("application/x-www-form-urlencoded", ref("TokenRequest")),
	}
}

func tokenResponses() map[string]*Response {
	unauthorized := oauthErrorResponse("invalid_client: missing or wrong client credentials (HTTP Basic or client_id/client_secret in the form).")
	unauthorized.Headers["WWW-Authenticate"] = &Header{Description: "`Basic realm=\"svc\"`.", Schema: &Schema{Type: SchemaType{"string"}}}
	return map[string]*Response{
		"200": {Description: "The access token.", Headers: noStoreHeaders(),
			Content: content("application/json", ref("TokenResponse"))},
		"400":     oauthErrorResponse("invalid_request (missing or malformed field), unsupported_grant_type, or invalid_grant (the subject token is not acceptable)."),
		"401":     unauthorized,
		"403":     oauthErrorResponse("access_denied: the subject token belongs to another tenant."),
		"429":     throttledResponse(),
		"default": oauthErrorResponse("server_error, e.g. no signing key is configured."),
	}
}

func sharedResponses() map[string]*Response {
	return map[string]*Response{
		"Unauthorized": withChallenge(problemResponse("UNAUTHORIZED: `missing token`, `malformed token`, or `invalid or expired token` "+
			"(one wording for every token that does not verify, revoked ones included)."),
			"RFC 6750: `Bearer realm=\"svc\"`, with `error=\"invalid_token\"` when a token was presented."),
		"Forbidden": withChallenge(problemResponse("FORBIDDEN: the ROLE_ADMIN role is required; signing keypair operations need it in the bootstrap tenant (SVC_BOOTSTRAP_TENANT_ID)."),
			"RFC 6750: `Bearer realm=\"svc\", error=\"insufficient_scope\"`."),
		"NotImplemented": problemResponse("NOT_IMPLEMENTED: this operation is not available yet."),
		"ServerError":    problemResponse("Unexpected error. 5xx answers carry a `ticket` to quote; 503 answers may be retryable (properties.retryable)."),
	}
}

func problemResponse(desc string) *Response {
	return &Response{Description: desc, Content: content("application/problem+json", ref("ProblemDetail"))}
}
