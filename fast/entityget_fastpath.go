package fast

import (
	"bytes"
	"encoding/binary"

	"github.com/valyala/fasthttp"
)

// opGetOneEntity is GET {ctx}/entity/{entityId}.
const opGetOneEntity = "getOneEntity"

// opCreate is POST {ctx}/entity/{format}/{entityName}/{modelVersion}.
const opCreate = "create"

// withEntityFastPaths hands the two hottest entity requests straight to
// their routes' handlers (the same instrument, authorize, text guard and
// txJoin chain the router holds), without the router's tree walk, which
// was a measurable share of their CPU (BENCHMARKS.md, issue 25):
//
//   - GET {ctx}/entity/{entityId} with an id in the canonical UUID form;
//   - POST {ctx}/entity/{format}/{entityName}/{modelVersion} with format
//     JSON or XML and both other segments non-empty.
//
// The path parameters are set as the router would set them (the raw
// segments, copied), and a panic answers as the router's PanicHandler
// does. Every other request, and every other spelling, goes to the
// router, which still holds both routes (405s, the other UUID forms).
// No static route is 36 characters of hex digits and hyphens, and no
// other POST route has JSON or XML as its first segment after /entity/,
// so none is shadowed (TestEntityFastPathsShadowNoRoute).
func (s *Server) withEntityFastPaths(get, create, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if get == nil && create == nil {
		return next
	}
	prefix := []byte(s.cfg.ContextPath + "/entity/")
	return func(ctx *fasthttp.RequestCtx) {
		var h fasthttp.RequestHandler
		switch {
		case ctx.IsGet() && get != nil:
			// The raw path, as the router matches it.
			p := ctx.Request.URI().PathOriginal()
			if !entityGetPath(prefix, p) {
				next(ctx)
				return
			}
			ctx.SetUserValue("entityId", string(p[len(prefix):]))
			h = get
		case ctx.IsPost() && create != nil:
			p := ctx.Request.URI().PathOriginal()
			i, j, ok := entityCreatePath(prefix, p)
			if !ok {
				next(ctx)
				return
			}
			// One copy of the three segments (the router copies each).
			rest := string(p[len(prefix):])
			ctx.SetUserValue("modelVersion", rest[j+1:])
			ctx.SetUserValue("entityName", rest[i+1:j])
			ctx.SetUserValue("format", rest[:i])
			h = create
		default:
			next(ctx)
			return
		}
		defer func() {
			if v := recover(); v != nil {
				s.recovered(ctx, v)
			}
		}()
		h(ctx)
	}
}

// entityCreatePath: p is prefix, then JSON or XML, then two non-empty
// segments. i and j are the offsets, after prefix, of the slashes ending
// the first and second segment.
func entityCreatePath(prefix, p []byte) (i, j int, ok bool) {
	if !bytes.HasPrefix(p, prefix) {
		return 0, 0, false
	}
	rest := p[len(prefix):]
	switch {
	case len(rest) > 5 && string(rest[:5]) == "JSON/":
		i = 4
	case len(rest) > 4 && string(rest[:4]) == "XML/":
		i = 3
	default:
		return 0, 0, false
	}
	k := bytes.IndexByte(rest[i+1:], '/')
	if k <= 0 {
		return 0, 0, false
	}
	j = i + 1 + k
	if j+1 >= len(rest) || bytes.IndexByte(rest[j+1:], '/') >= 0 {
		return 0, 0, false
	}
	return i, j, true
}

// entityGetPath: p is prefix followed by one canonical UUID.
func entityGetPath(prefix, p []byte) bool {
	return len(p) == len(prefix)+36 && bytes.HasPrefix(p, prefix) && canonicalUUID(p[len(prefix):])
}

// canonicalUUID: b is 8-4-4-4-12 hex digits (either case) and hyphens.
// The hyphens are checked at their four places and the digits eight or
// four at a time (hexWord): this runs before every entity get.
func canonicalUUID(b []byte) bool {
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return false
	}
	return hexWord(binary.LittleEndian.Uint64(b)) && hexWord(word4b(b, 9)) && hexWord(word4b(b, 14)) &&
		hexWord(word4b(b, 19)) && hexWord(binary.LittleEndian.Uint64(b[24:])) && hexWord(word4b(b, 32))
}
