package fast

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// opGetOneEntity is GET {ctx}/entity/{entityId}.
const opGetOneEntity = "getOneEntity"

// withEntityGetFastPath hands GET {ctx}/entity/{entityId} with an id in
// the canonical UUID form straight to the route's handler (the same
// instrument, authorize, text guard and txJoin chain the router holds),
// without the router's tree walk: the entity get is the hottest read, and
// the walk over every route was a measurable share of its CPU
// (BENCHMARKS.md, issue 25). The id is set as the route parameter the
// router would set, and a panic answers as the router's PanicHandler
// does. Every other request, and every other spelling of an id, goes to
// the router, which still holds the route (405s, the other UUID forms).
// No static route is 36 characters of hex digits and hyphens, so none is
// shadowed (TestEntityGetFastPathShadowsNoRoute).
func (s *Server) withEntityGetFastPath(get, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if get == nil {
		return next
	}
	prefix := []byte(s.cfg.ContextPath + "/entity/")
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsGet() {
			next(ctx)
			return
		}
		// The raw path, as the router matches it.
		p := ctx.Request.URI().PathOriginal()
		if !entityGetPath(prefix, p) {
			next(ctx)
			return
		}
		defer func() {
			if v := recover(); v != nil {
				s.recovered(ctx, v)
			}
		}()
		ctx.SetUserValue("entityId", string(p[len(prefix):]))
		get(ctx)
	}
}

// entityGetPath: p is prefix followed by one canonical UUID.
func entityGetPath(prefix, p []byte) bool {
	return len(p) == len(prefix)+36 && bytes.HasPrefix(p, prefix) && canonicalUUID(p[len(prefix):])
}

// canonicalUUID: b is 8-4-4-4-12 hex digits (either case) and hyphens.
// The hyphens are checked at their four places and each group's digits
// by table, not by a switch on every byte's position: this runs before
// every entity get.
func canonicalUUID(b []byte) bool {
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return false
	}
	return allHex(b[:8]) && allHex(b[9:13]) && allHex(b[14:18]) && allHex(b[19:23]) && allHex(b[24:])
}

// isHexDigit[c]: c is 0-9, a-f or A-F.
var isHexDigit = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHexDigit[c] {
			return false
		}
	}
	return true
}
