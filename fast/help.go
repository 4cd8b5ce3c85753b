package fast

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"svc/help"
	"svc/platform/apierr"
)

// helpIndex is GET {ctx}/help: every topic without its body.
func (s *Server) helpIndex(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBody(s.deps.Help.IndexJSON())
}

// withHelpFastPath serves GET {ctx}/help/{topic} without the router:
// fasthttp/router boxes every path parameter into an interface (two
// allocations per request), and help is the path agents poll hardest.
func (s *Server) withHelpFastPath(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	prefix := []byte(s.cfg.ContextPath + "/help/")
	serve := s.instrument("/help/{topic}", func(ctx *fasthttp.RequestCtx) {
		s.serveHelpTopic(ctx, ctx.Path()[len(prefix):])
	})
	// Everything below the prefix is a topic name, so `a/b` gets the topic-name
	// rule's 400 for a disallowed character rather than the router's 404.
	return func(ctx *fasthttp.RequestCtx) {
		if ctx.IsGet() && bytes.HasPrefix(ctx.Path(), prefix) {
			serve(ctx)
			return
		}
		next(ctx)
	}
}

// helpTopic is the router's entry for {ctx}/help/{topic}; GETs normally
// take the fast path above.
func (s *Server) helpTopic(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("topic").(string)
	s.serveHelpTopic(ctx, s2b(name))
}

// serveHelpTopic writes one topic. Bodies are rendered at load, so this
// only looks the topic up and copies bytes.
func (s *Server) serveHelpTopic(ctx *fasthttp.RequestCtx, nameB []byte) {
	if !help.ValidName(nameB) {
		s.writeProblem(ctx, NewProblem(apierr.BadRequest, "invalid topic path: allowed characters are A-Z a-z 0-9 . _ - with no leading or trailing dot or hyphen"))
		return
	}
	tp, ok := s.deps.Help.GetBytes(nameB)
	if !ok {
		name := string(nameB)
		s.writeProblem(ctx, NewProblem(apierr.HelpTopicNotFound, "no such help topic: "+name, StrProp("topic", name)))
		return
	}
	// People reading help in a terminal or an editor ask for the text
	// itself (an extension; JSON stays the default).
	switch negotiateHelp(ctx.Request.Header.Peek("Accept")) {
	case helpMarkdown:
		ctx.SetContentType("text/markdown; charset=utf-8")
		ctx.SetBody(tp.Markdown)
	case helpText:
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBody(tp.Text)
	default:
		ctx.SetContentType("application/json")
		ctx.SetBody(tp.JSON)
	}
	ctx.Response.Header.Add("Vary", "Accept")
}
