package fast

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/config"
)

// openAPIDoc is the serialized document split around servers[0].url, so a
// request only splices its own base URL in.
type openAPIDoc struct {
	head, tail []byte
}

const serverURLMarker = "\x00SERVER_URL\x00"

// buildOpenAPI renders svc's OpenAPI 3.1 document from the route table. It
// reads Route.Handler to document 501s, so it must run after handlers are
// attached.
func buildOpenAPI(routes []Route) (*openAPIDoc, error) {
	b, err := json.Marshal(openAPISpec(routes))
	if err != nil {
		return nil, err
	}
	marker, _ := json.Marshal(serverURLMarker)
	i := bytes.Index(b, marker)
	if i < 0 || bytes.Contains(b[i+1:], marker) {
		return nil, errors.New("OpenAPI document must hold the server URL marker exactly once")
	}
	// head ends with the opening quote, tail starts with the closing one.
	return &openAPIDoc{head: b[:i+1], tail: b[i+len(marker)-1:]}, nil
}

// openAPIDocs holds each document built, by openAPIKey of its routes. The
// document is a function of the route table alone, and a process (a test
// binary above all: every fast.New, hundreds per package) builds servers
// over the same few tables; marshalling the document was about 5 % of the
// fast package's test CPU. At most one entry per combination of attached
// handlers, which the configurations a process runs keep to a handful.
var openAPIDocs sync.Map // string -> *openAPIDoc

// cachedOpenAPI is buildOpenAPI(routes), built once per distinct input.
// The document's bytes are never written after building, so servers share
// them.
func cachedOpenAPI(routes []Route) (*openAPIDoc, error) {
	key := openAPIKey(routes)
	if d, ok := openAPIDocs.Load(key); ok {
		return d.(*openAPIDoc), nil
	}
	d, err := buildOpenAPI(routes)
	if err != nil {
		return nil, err
	}
	v, _ := openAPIDocs.LoadOrStore(key, d)
	return v.(*openAPIDoc), nil
}

// openAPIKey is every field of routes that openAPISpec reads: all but the
// handler, of which only whether it is attached (a 501 is documented when
// it is not).
func openAPIKey(routes []Route) string {
	var b strings.Builder
	for i := range routes {
		r := &routes[i]
		b.WriteString(r.Method)
		b.WriteByte(0)
		b.WriteString(r.Path)
		b.WriteByte(0)
		b.WriteString(r.OpID)
		b.WriteByte(0)
		b.WriteString(r.Tag)
		b.WriteByte(0)
		b.WriteString(r.Summary)
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(int(r.Access)))
		if r.Handler == nil {
			b.WriteString("\x00-\x00")
		} else {
			b.WriteString("\x00+\x00")
		}
	}
	return b.String()
}

// serveOpenAPI is GET /openapi.json with servers[0].url set to
// {scheme}://{host}{context_path} of this request.
func (s *Server) serveOpenAPI(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	// Revalidate so that an upgraded binary's document is seen at once.
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	host := ctx.Host()
	if len(host) == 0 || !urlSafeHost(host) {
		host = s2b("localhost")
	}
	s.writeOpenAPI(ctx.Response.BodyWriter(), ctx.IsTLS(), host)
}

// writeOpenAPI writes the document with servers[0].url set to
// {scheme}://{host}{context_path}; host is URL-safe.
func (s *Server) writeOpenAPI(w io.Writer, tls bool, host []byte) {
	w.Write(s.openapi.head)
	if tls {
		w.Write(s2b("https://"))
	} else {
		w.Write(s2b("http://"))
	}
	w.Write(host)
	if cp := s.cfg.ContextPath; jsonSafeHost(s2b(cp)) {
		w.Write(s2b(cp))
	} else {
		esc := appendJSONString(nil, cp)
		w.Write(esc[1 : len(esc)-1])
	}
	w.Write(s.openapi.tail)
}

// GoldenOpenAPI is fast/testdata/openapi.golden.json: /openapi.json as a
// node with the default configuration and no services configured serves
// it to http://svc.test, indented (indenting keeps key order, strings and
// number spellings). make generate writes it; TestOpenAPIGolden checks
// the served document against it and TestGeneratedFilesCurrent (docs/gen)
// that it is current, so a change to the document shows in review as a
// diff of that file.
func GoldenOpenAPI() ([]byte, error) {
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := New(cfg, Deps{})
	if err != nil {
		return nil, err
	}
	var raw, out bytes.Buffer
	s.writeOpenAPI(&raw, false, s2b("svc.test"))
	if err := json.Indent(&out, raw.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// jsonSafeHost reports whether b can be written inside a JSON string as is:
// printable ASCII without quotes, backslashes or the characters
// appendJSONString escapes for HTML.
func jsonSafeHost(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// urlSafeHost reports whether b is made only of the characters of a host
// name, an IP literal and a port (no percent-encoding or sub-delims),
// so it can stand in the URL and inside the JSON string as is.
func urlSafeHost(b []byte) bool {
	for _, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']'
		if !ok {
			return false
		}
	}
	return true
}
