package fast

import "github.com/valyala/fasthttp"

// areaBinder returns the handlers an API area provides, keyed by
// operationId. A nil or absent handler leaves the operation at 501, which
// lets an area switch itself off when its dependency is not configured.
type areaBinder func(s *Server) map[string]fasthttp.RequestHandler

// binders is filled by each area's handler file in an init function, so
// adding an area touches no shared file.
var binders []areaBinder

func registerArea(b areaBinder) { binders = append(binders, b) }

// bindHandlers attaches area handlers to the route table before the router
// and the OpenAPI document are built.
func (s *Server) bindHandlers() {
	byOp := map[string]fasthttp.RequestHandler{}
	for _, b := range binders {
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
