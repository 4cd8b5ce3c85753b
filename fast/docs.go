package fast

import "github.com/valyala/fasthttp"

const docsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>svc API reference</title></head>
<body><h1>svc API reference</h1><p>The document is at <a href="/openapi.json">/openapi.json</a>.</p></body></html>`

// serveDocs is GET /docs, the API reference page.
func (s *Server) serveDocs(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(docsPage)
}

// serveDocsAsset serves the page's own scripts and styles.
func (s *Server) serveDocsAsset(ctx *fasthttp.RequestCtx) {
	s.notFound(ctx)
}
