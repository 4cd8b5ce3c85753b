package fast

import (
	"github.com/valyala/fasthttp"

	"svc/help"
)

// helpIndex is GET {ctx}/help: every topic without its body.
func (s *Server) helpIndex(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBody(s.deps.Help.IndexJSON())
}

// helpTopic is GET {ctx}/help/{topic}. Bodies are rendered at load, so this
// path only looks the topic up and copies bytes.
func (s *Server) helpTopic(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("topic").(string)
	if !help.ValidName(s2b(name)) {
		s.writeProblem(ctx, NewProblem(400, "BAD_REQUEST", "invalid topic path: allowed characters are A-Z a-z 0-9 . _ - with no leading or trailing dot or hyphen"))
		return
	}
	tp, ok := s.deps.Help.Get(name)
	if !ok {
		s.writeProblem(ctx, NewProblem(404, "HELP_TOPIC_NOT_FOUND", "no such help topic: "+name, StrProp("topic", name)))
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(tp.JSON)
}
