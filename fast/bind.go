package fast

import "github.com/valyala/fasthttp"

// areaBinder returns the handlers an API area provides, keyed by
// operationId. A nil or absent handler leaves the operation at 501, which
// lets an area switch itself off when its dependency is not configured.
type areaBinder func(s *Server) map[string]fasthttp.RequestHandler

// areas lists every API area's handlers, explicitly: a new area adds its
// binder here. A later area's handler for the same operation replaces an
// earlier one's.
func areas() []areaBinder {
	return []areaBinder{
		accountHandlers,
		adminSwitchHandlers,
		auditHandlers,
		changeFeedHandlers,
		clientHandlers,
		entityHandlers,
		keypairHandlers,
		messageHandlers,
		modelHandlers,
		ndjsonHandlers,
		oauthHandlers,
		oauthExtHandlers,
		oidcHandlers,
		searchHandlers,
		searchCompatHandlers,
		sqlQueryHandlers,
		sqlSchemaHandlers,
		statsHandlers,
		streamDataHandlers,
		streamDataExtHandlers,
		trustedKeyHandlers,
		workflowHandlers,
	}
}

// bindHandlers attaches area handlers to the route table before the router
// and the OpenAPI document are built.
func (s *Server) bindHandlers() {
	byOp := map[string]fasthttp.RequestHandler{}
	for _, b := range areas() {
		for op, h := range b(s) {
			if h != nil {
				byOp[op] = h
			}
		}
	}
	for i := range s.routes {
		if h, ok := byOp[s.routes[i].OpID]; ok {
			s.routes[i].Handler = h
		}
	}
}
