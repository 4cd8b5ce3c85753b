package fast

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/fasthttp/router"
	swaggerui "github.com/swaggest/swgui/v5/static"
	"github.com/valyala/fasthttp"
)

// The /docs page is Swagger UI (v5.29.1, as embedded by
// github.com/swaggest/swgui) plus a small start script of ours. Everything
// the page loads comes from svc itself, and the Content-Security-Policy
// makes the browser hold to that: a page that needed a CDN would not render.

// docsCSP allows same-origin scripts, styles, images and fetches only.
// Swagger UI sets inline styles and shows SVG/PNG data: URLs.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'self'"

// docsInitJS starts Swagger UI on /openapi.json. BaseLayout has no top bar,
// and validatorUrl null keeps the page from calling the public validator.
const docsInitJS = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null,
    docExpansion: "list",
    displayOperationId: true,
    persistAuthorization: false
  });
});
`

// docsAsset is one file under /docs/. Swagger UI's files are embedded
// gzipped; body holds those bytes and plain is inflated on first use by a
// client that does not accept gzip.
type docsAsset struct {
	contentType string
	body        []byte
	gzipped     bool
	etag        string

	plainOnce sync.Once
	plain     []byte
}

func (a *docsAsset) plainBody() []byte {
	a.plainOnce.Do(func() {
		// buildDocsSite has checked that the archive inflates.
		a.plain, _ = gunzip(a.body)
	})
	return a.plain
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// docsSite is the page and its assets, built once per process.
type docsSite struct {
	page   []byte
	assets map[string]*docsAsset
}

var (
	docsOnce sync.Once
	docsData *docsSite
	docsErr  error
)

func loadDocsSite() (*docsSite, error) {
	docsOnce.Do(func() { docsData, docsErr = buildDocsSite() })
	return docsData, docsErr
}

func buildDocsSite() (*docsSite, error) {
	site := &docsSite{assets: map[string]*docsAsset{}}
	entries, err := fs.ReadDir(swaggerui.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("reading the embedded Swagger UI: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(swaggerui.FS, e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading the embedded Swagger UI: %w", err)
		}
		name, gz := strings.CutSuffix(e.Name(), ".gz")
		if gz {
			// Check once that it inflates; the plain form is kept only
			// when a client asks for it.
			if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
				return nil, fmt.Errorf("embedded Swagger UI file %s: %w", e.Name(), err)
			}
		}
		site.assets[name] = newDocsAsset(name, b, gz)
	}
	site.assets["init.js"] = newDocsAsset("init.js", []byte(docsInitJS), false)
	for _, need := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"} {
		if site.assets[need] == nil {
			return nil, fmt.Errorf("the embedded Swagger UI lacks %s", need)
		}
	}
	// Asset URLs carry their content hash, so browsers may keep them for
	// good and still see a new Swagger UI after an upgrade.
	url := func(name string) string { return "/docs/" + name + "?v=" + site.assets[name].etag[1:13] }
	site.page = []byte(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API reference</title>
<link rel="stylesheet" href="` + url("swagger-ui.css") + `">
<link rel="icon" type="image/png" href="` + url("favicon-32x32.png") + `" sizes="32x32">
</head>
<body>
<noscript>This page needs JavaScript. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>; <code>svc help</code> explains every area.</noscript>
<div id="swagger-ui"></div>
<script src="` + url("swagger-ui-bundle.js") + `"></script>
<script src="` + url("init.js") + `"></script>
</body>
</html>
`)
	return site, nil
}

func newDocsAsset(name string, body []byte, gzipped bool) *docsAsset {
	sum := sha256.Sum256(body)
	return &docsAsset{
		contentType: docsContentType(name),
		body:        body,
		gzipped:     gzipped,
		etag:        `"` + hex.EncodeToString(sum[:16]) + `"`,
	}
}

func docsContentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".html":
		return "text/html; charset=utf-8"
	case ".map", ".json":
		return "application/json"
	default:
		return "application/octet-stream"
	}
}

// routeDocs registers GET /docs and GET /docs/{asset} (root paths, outside
// the context path). The site is built here so that a broken embed fails
// startup rather than a request.
func (s *Server) routeDocs(r *router.Router) error {
	site, err := loadDocsSite()
	if err != nil {
		return err
	}
	r.GET("/docs", s.instrument("/docs", site.servePage))
	r.GET("/docs/{asset}", s.instrument("/docs/{asset}", func(ctx *fasthttp.RequestCtx) {
		name, _ := ctx.UserValue("asset").(string)
		if !site.serveAsset(ctx, name) {
			s.notFound(ctx)
		}
	}))
	return nil
}

// servePage is GET /docs, the API reference page.
func (site *docsSite) servePage(ctx *fasthttp.RequestCtx) {
	setDocsHeaders(ctx)
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.SetBodyRaw(site.page)
}

// serveAsset writes the page's script, style or icon called name, and
// reports false when there is none.
func (site *docsSite) serveAsset(ctx *fasthttp.RequestCtx, name string) bool {
	a := site.assets[name]
	if a == nil {
		return false
	}
	setDocsHeaders(ctx)
	h := &ctx.Response.Header
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Vary", "Accept-Encoding")
	ctx.SetContentType(a.contentType)
	if inm := ctx.Request.Header.Peek("If-None-Match"); len(inm) > 0 && etagListHas(inm, a.etag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return true
	}
	switch {
	case !a.gzipped:
		ctx.Response.SetBodyRaw(a.body)
	case ctx.Request.Header.HasAcceptEncoding("gzip"):
		h.Set("Content-Encoding", "gzip")
		ctx.Response.SetBodyRaw(a.body)
	default:
		ctx.Response.SetBodyRaw(a.plainBody())
	}
	return true
}

func setDocsHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// etagListHas reports whether an If-None-Match value names etag (or is *).
func etagListHas(list []byte, etag string) bool {
	for _, part := range bytes.Split(list, []byte(",")) {
		p := bytes.TrimSpace(part)
		p = bytes.TrimPrefix(p, []byte("W/"))
		if string(p) == etag || string(p) == "*" {
			return true
		}
	}
	return false
}
