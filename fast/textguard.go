package fast

import (
	"bytes"
	"errors"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
)

// Text svc stores is UTF-8 without NUL characters or unpaired surrogates,
// and a JSON document names each member once (docs/decisions/0013-documents-and-text.md). The
// guard below holds that rule for every operation at one place, before
// its handler runs, so both storage engines see the same requests and
// PostgreSQL never meets text it cannot hold:
//
//   - every path parameter (also as the handlers' second unescaping reads
//     it) and every query parameter name and value;
//   - a form body's names and values (the OAuth endpoints, answered in
//     their own error shape);
//   - a body that is a JSON document, checked by jsondoc. A body that is
//     not JSON at all is left to the handler, which refuses it in its own
//     words; only its I-JSON and text faults are refused here.
//
// The operations in selfCheckedBodies check their documents themselves,
// in the one pass that also validates them (entity writes, the NDJSON
// stream, messages), so the hot ingest path does not scan a body twice.
var selfCheckedBodies = map[string]bool{
	"create": true, "createCollection": true, "updateCollection": true,
	"updateSingleWithLoopback": true, "updateSingle": true,
	"patchSingleWithLoopback": true, "patchSingle": true,
	opCreateNDJSON: true, "newMessage": true,
}

// pathParams lists the {names} of a route path.
func pathParams(path string) []string {
	var names []string
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, path[i+1:i+j])
		path = path[i+j+1:]
	}
}

// guardText wraps the handler of the operation opID at path.
func (s *Server) guardText(path, opID string, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	params := pathParams(path)
	checkBody := !selfCheckedBodies[opID]
	oauth := path == "/oauth/token" || path == introspectPath || path == revokePath
	return func(ctx *fasthttp.RequestCtx) {
		err := requestTextFault(ctx, params, checkBody)
		if err == nil && oauth {
			// A client id from Basic credentials is looked up in storage.
			if id, _, ok := basicCredentials(ctx.Request.Header.Peek("Authorization")); ok && !jsondoc.ValidText(id) {
				err = apierr.New(apierr.BadRequest, "the client id of the Basic credentials "+jsondoc.TextFault(id))
			}
		}
		if err == nil {
			next(ctx)
			return
		}
		if oauth {
			writeOAuthError(ctx, 400, "invalid_request", err.Message)
			return
		}
		s.writeError(ctx, err)
	}
}

// requestTextFault finds the first part of the request that is not text
// svc stores; nil when there is none. It allocates only when it refuses.
func requestTextFault(ctx *fasthttp.RequestCtx, params []string, checkBody bool) *apierr.Error {
	for _, name := range params {
		v := routeParam(ctx, name)
		if plainText(v) {
			// ASCII without NUL or '%' (an entity id, a model name): text,
			// and the second unescaping leaves it as it is.
			continue
		}
		if !jsondoc.ValidText(v) {
			return paramFault(name, v)
		}
		// pathText unescapes once more; what it yields must be text too.
		if strings.IndexByte(v, '%') >= 0 {
			if u, err := url.PathUnescape(v); err == nil && !jsondoc.ValidText(u) {
				return paramFault(name, u)
			}
		}
	}
	// Without a query string there are no query parameters to parse and
	// visit (the entity get, the hottest read, has none).
	if len(ctx.URI().QueryString()) > 0 {
		if f := argsFault(ctx.QueryArgs(), "query parameter"); f != nil {
			return f
		}
	}
	if bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("application/x-www-form-urlencoded")) {
		return argsFault(ctx.PostArgs(), "form field")
	}
	if !checkBody || ctx.Request.IsBodyStream() {
		return nil
	}
	b := ctx.PostBody()
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i == len(b) || (b[i] != '{' && b[i] != '[' && b[i] != '"') {
		return nil
	}
	// Not JSON at all: the handler says so in its own words.
	if err := jsondoc.Refusal(b, ""); err != nil {
		if e := (*apierr.Error)(nil); errors.As(err, &e) {
			return e
		}
		return apierr.New(apierr.BadRequest, err.Error())
	}
	return nil
}

// plainText: every byte of s is ASCII other than NUL and '%'. One pass
// (eight bytes a step, swar.go) that settles the common parameter;
// anything else takes the full check.
func plainText(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plainWord(word8(s, i)) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == 0 || c == '%' || c >= 0x80 {
			return false
		}
	}
	return true
}

func paramFault(name, v string) *apierr.Error {
	return apierr.New(apierr.BadRequest, "parameter '"+name+"' "+jsondoc.TextFault(v)+"; svc accepts UTF-8 text without NUL characters",
		apierr.P("parameter", name))
}

func argsFault(args *fasthttp.Args, kind string) *apierr.Error {
	var fault *apierr.Error
	// VisitAll, not the All iterator that replaces it upstream: this runs
	// on every request and was measured in this form (BENCHMARKS.md).
	args.VisitAll(func(k, v []byte) { //nolint:staticcheck // SA1019, see above
		if fault != nil {
			return
		}
		if !jsondoc.ValidTextBytes(k) {
			fault = apierr.New(apierr.BadRequest, "a "+kind+" name "+jsondoc.TextFault(string(k))+"; svc accepts UTF-8 text without NUL characters")
			return
		}
		if !jsondoc.ValidTextBytes(v) {
			fault = apierr.New(apierr.BadRequest, kind+" '"+string(k)+"' "+jsondoc.TextFault(string(v))+"; svc accepts UTF-8 text without NUL characters",
				apierr.P("parameter", string(k)))
		}
	})
	return fault
}
