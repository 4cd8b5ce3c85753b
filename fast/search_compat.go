package fast

import "github.com/valyala/fasthttp"

// The current Python client template (mcp-cyoda-quart-app) searches with
// POST {ctx}/search/{entityName}/{modelVersion} and reads the answer as a
// JSON list (docs/decisions/0021-search.md, docs/decisions/0030-client-compatibility.md). The route is
// beyond the wire contract, so it is an extension: the direct search with
// its query parameters and errors, answering one application/json array of
// envelopes instead of NDJSON. An alias of searchEntities would not do, as
// the body's media type differs.

const opSearchAsArray = "searchEntitiesAsArray"

func searchCompatHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.Search == nil {
		return nil
	}
	h := &searchAPI{s: s, svc: s.deps.Search}
	return map[string]fasthttp.RequestHandler{opSearchAsArray: func(ctx *fasthttp.RequestCtx) { h.search(ctx, true) }}
}

// searchCompatRoutes are the extension routes of the search area.
func searchCompatRoutes() []Route {
	return []Route{{"POST", "/search/{entityName}/{modelVersion}", opSearchAsArray, TagSearch,
		"Search entities directly, answering a JSON array", Authenticated, nil}}
}

// searchCompatDocs document searchCompatRoutes.
func searchCompatDocs() map[string]opDoc {
	return map[string]opDoc{opSearchAsArray: {
		desc: "The direct search of `POST /search/direct/{entityName}/{modelVersion}` (same condition body, query parameters and errors) " +
			"answering one `application/json` array of entity envelopes instead of NDJSON; for client templates that post their searches here.",
		params: []*Parameter{
			query("pointInTime", "Read as at this instant (RFC 3339, or a bare date meaning midnight UTC); default now."+instantRangeDoc, dateTime("")),
			query("limit", "Most matches allowed.", intRange("int32", 1, 10000, 1000)),
			arrayQuery("sort", "Sort key `[@]path[:asc|desc]`, repeatable; as on the direct search.", &Schema{Type: SchemaType{"string"}}, false),
		},
		body: jsonBody("The search condition; match everything with `{\"type\":\"group\",\"operator\":\"AND\",\"conditions\":[]}`.", ref("Condition"), true),
		ok:   okJSON("The matches in one array; `[]` when nothing matches.", arr(ref("EntityEnvelope"), "")),
		errs: []errDoc{e(400, "BAD_REQUEST, INVALID_CONDITION, INVALID_FIELD_PATH, CONDITION_TYPE_MISMATCH, FUNCTION_CONDITION_FAILED, SEARCH_RESULT_LIMIT or SCAN_BUDGET_EXHAUSTED."),
			e(404, "MODEL_NOT_FOUND: no such model."),
			e(503, "NO_COMPUTE_MEMBER_FOR_TAG, DISPATCH_TIMEOUT or COMPUTE_MEMBER_DISCONNECTED (retryable): a function condition's compute member is missing, too slow or gone.")},
	}}
}
