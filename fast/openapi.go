package fast

import (
	"bytes"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// openAPIDoc is the serialized document split around servers[0].url, so a
// request only splices its own base URL in.
type openAPIDoc struct {
	head, tail []byte
}

const serverURLMarker = "\x00SERVER_URL\x00"

// buildOpenAPI renders svc's OpenAPI 3.1 document from the route table.
func buildOpenAPI(routes []Route) (*openAPIDoc, error) {
	doc := openAPISpec(routes)
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	marker, _ := json.Marshal(serverURLMarker)
	i := bytes.Index(b, marker)
	return &openAPIDoc{head: b[:i+1], tail: b[i+len(marker)-1:]}, nil
}

// serveOpenAPI is GET /openapi.json with servers[0].url set to
// {scheme}://{host}{context_path} of this request.
func (s *Server) serveOpenAPI(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	host := string(ctx.Host())
	if host == "" || strings.ContainsAny(host, "\"\\<>") {
		host = "localhost"
	}
	w := ctx.Response.BodyWriter()
	w.Write(s.openapi.head)
	w.Write([]byte(scheme + "://" + host + s.cfg.ContextPath))
	w.Write(s.openapi.tail)
}
