package fast

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Map is an ordered-enough JSON object for the document builder; go-json
// sorts map keys, which keeps the output stable.
type Map = map[string]any

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
func openAPISpec(routes []Route) Map {
	docs := opDocTable()
	params := pathParamDocs()
	paths := Map{}
	for _, r := range routes {
		item, _ := paths[r.Path].(Map)
		if item == nil {
			item = Map{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = operation(r, docs[r.OpID], params)
	}
	tags := make([]Map, 0, len(tagGroups))
	for _, t := range tagGroups {
		tags = append(tags, Map{"name": t.name, "description": t.desc})
	}
	return Map{
		"openapi": "3.1.0",
		"info": Map{
			"title":   "svc",
			"version": "1.0",
			"description": "svc entity service: entities described by entity models, workflows, search, audit and " +
				"messaging, plus an OAuth 2.0 authorization server.\n\n" +
				"Send `Authorization: Bearer <token>` on every operation except the token endpoint; get a token from " +
				"`POST /oauth/token` with a machine client's credentials. Errors are RFC 9457 problem details " +
				"(`application/problem+json`) carrying `properties.errorCode`.",
		},
		"servers":  []Map{{"url": serverURLMarker, "description": "This svc instance"}},
		"tags":     tags,
		"security": []Map{{"bearerAuth": []string{}}},
		"paths":    paths,
		"components": Map{
			"securitySchemes": Map{
				"bearerAuth": Map{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
					"description": "An RS256 JWT issued by svc, by a registered OIDC provider, or signed with a registered trusted key."},
				"basicAuth": Map{"type": "http", "scheme": "basic",
					"description": "Machine client credentials (`client_id:client_secret`) for the token endpoint."},
			},
			"schemas":   withOAuthSchemas(componentSchemas()),
			"responses": sharedResponses(),
		},
	}
}

func operation(r Route, d opDoc, pathDocs map[string]pathParamDoc) Map {
	op := Map{
		"operationId": r.OpID,
		"tags":        []string{r.Tag},
		"summary":     r.Summary,
	}
	desc := d.desc
	if isExtension(r.OpID) {
		op["x-svc-extension"] = true
		desc = strings.TrimSpace(extensionDescription + " " + desc)
	}
	if r.Access == Admin {
		desc = strings.TrimSpace(desc + " Requires the ROLE_ADMIN role.")
	}
	if desc != "" {
		op["description"] = desc
	}

	var ps []Map
	for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
		name := m[1]
		pd, known := pathDocs[name]
		schema := pd.schema
		if s, ok := d.pathSchemas[name]; ok {
			schema = s
		}
		if !known && schema == nil {
			schema = Map{"type": "string"}
		}
		ps = append(ps, param("path", name, pd.desc, schema, true))
	}
	ps = append(ps, d.params...)
	if idempotentOps[r.OpID] {
		ps = append(ps, idempotencyKeyParam())
	}
	if len(ps) > 0 {
		op["parameters"] = ps
	}

	if r.OpID == tokenOpID {
		tokenOperation(op)
	} else if d.body != nil {
		op["requestBody"] = d.body
	}

	switch {
	case r.OpID == tokenOpID || d.oauth:
		op["security"] = []Map{{"basicAuth": []string{}}}
	case r.Access == Public:
		op["security"] = []Map{}
	}

	op["responses"] = responses(r, d)
	return op
}

// responses lists the success response, the operation's own errors, and
// the errors every route of its access level can give.
func responses(r Route, d opDoc) Map {
	resp := Map{}
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
		resp["default"] = Map{"$ref": "#/components/responses/ServerError"}
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
		resp["401"] = Map{"$ref": "#/components/responses/Unauthorized"}
	}
	if r.Access == Admin {
		resp["403"] = Map{"$ref": "#/components/responses/Forbidden"}
	}
	if _, declared := resp["501"]; !declared {
		switch {
		case r.Handler == nil:
			resp["501"] = Map{"$ref": "#/components/responses/NotImplemented"}
		case d.mock501:
			resp["501"] = problemResponse("NOT_IMPLEMENTED: not available while SVC_IAM_MODE=mock.")
		}
	}
	return resp
}

func tokenOperation(op Map) {
	op["requestBody"] = Map{
		"description": "Form fields of the grant.",
		"required":    true,
		"content": Map{"application/x-www-form-urlencoded": Map{
			"schema": ref("TokenRequest"),
		}},
	}
}

func tokenResponses() Map {
	noStore := Map{"Cache-Control": Map{"description": "Always no-store.", "schema": Map{"type": "string"}}}
	oauthErr := func(desc string) Map {
		return Map{"description": desc, "headers": noStore, "content": content("application/json", ref("OAuthError"))}
	}
	unauthorized := oauthErr("invalid_client: missing or wrong client credentials (HTTP Basic or client_id/client_secret in the form).")
	unauthorized["headers"] = Map{
		"Cache-Control":    noStore["Cache-Control"],
		"WWW-Authenticate": Map{"description": "`Basic realm=\"svc\"`.", "schema": Map{"type": "string"}},
	}
	return Map{
		"200": Map{"description": "The access token.", "headers": noStore,
			"content": content("application/json", ref("TokenResponse"))},
		"400":     oauthErr("invalid_request (missing or malformed field), unsupported_grant_type, or invalid_grant (the subject token is not acceptable)."),
		"401":     unauthorized,
		"403":     oauthErr("access_denied: the subject token belongs to another tenant."),
		"429":     throttledResponse(oauthErr),
		"default": oauthErr("server_error, e.g. no signing key is configured."),
	}
}

func sharedResponses() Map {
	return Map{
		"Unauthorized": withChallenge(problemResponse("UNAUTHORIZED: `missing token`, `malformed token`, or `invalid or expired token` "+
			"(one wording for every token that does not verify, revoked ones included)."),
			"RFC 6750: `Bearer realm=\"svc\"`, with `error=\"invalid_token\"` when a token was presented."),
		"Forbidden": withChallenge(problemResponse("FORBIDDEN: the ROLE_ADMIN role is required; signing keypair operations need it in the bootstrap tenant (SVC_BOOTSTRAP_TENANT_ID)."),
			"RFC 6750: `Bearer realm=\"svc\", error=\"insufficient_scope\"`."),
		"NotImplemented": problemResponse("NOT_IMPLEMENTED: this operation is not available yet."),
		"ServerError":    problemResponse("Unexpected error. 5xx answers carry a `ticket` to quote; 503 answers may be retryable (properties.retryable)."),
	}
}

func problemResponse(desc string) Map {
	return Map{"description": desc, "content": content("application/problem+json", ref("ProblemDetail"))}
}
