package fast

import (
	"github.com/valyala/fasthttp"

	"svc/platform/switches"
)

// The runtime switches of the compatible system (docs/decisions/0028-listeners-and-operations.md):
// the log level and the trace sampler of the node asked, ROLE_ADMIN. They are
// outside the wire contract's document, so the OpenAPI document lists them
// with the extensions; scope=cluster (svc's own) applies a change on every
// node through the cluster bus.
const (
	opGetLogLevel     = "getLogLevel"
	opSetLogLevel     = "setLogLevel"
	opGetTraceSampler = "getTraceSampler"
	opSetTraceSampler = "setTraceSampler"
	logLevelPath      = "/admin/log-level"
	traceSamplerPath  = "/admin/trace-sampler"
)

func adminSwitchRoutes() []Route {
	return []Route{
		{"GET", logLevelPath, opGetLogLevel, TagPlatform, "Read this node's log level", Admin, nil},
		{"POST", logLevelPath, opSetLogLevel, TagPlatform, "Change the log level (this node, or every node with scope=cluster)", Admin, nil},
		{"GET", traceSamplerPath, opGetTraceSampler, TagPlatform, "Read this node's trace sampler", Admin, nil},
		{"POST", traceSamplerPath, opSetTraceSampler, TagPlatform, "Change the trace sampler (this node, or every node with scope=cluster)", Admin, nil},
	}
}

func adminSwitchDocs() map[string]opDoc {
	scope := query("scope", "svc extension: `node` (default) changes the node asked; `cluster` changes every live node of the cluster "+
		"(sent over the cluster bus; a node that joins later keeps its own setting). Outside cluster mode both mean this node.",
		enum("", "node", "cluster"))
	levelView := obj("", Props{"level": enum("", "debug", "info", "warn", "error")}, "level")
	levelSet := obj("", Props{"level": enum("", "debug", "info", "warn", "error"), "previous": enum("", "debug", "info", "warn", "error")}, "level", "previous")
	sampler := obj("", Props{
		"sampler":      enum("`always`, `never` or `ratio`.", "always", "never", "ratio"),
		"ratio":        number("With `ratio` only: the share of root traces recorded, above 0 and at most 1."),
		"parent_based": boolean("Follow the caller's sampling decision (traceparent) when there is one; default true."),
	}, "sampler", "parent_based")
	samplerIn := obj("", Props{
		"sampler":      enum("`always`, `never` or `ratio`.", "always", "never", "ratio"),
		"ratio":        number("Required with `ratio`, refused with the others: above 0 and at most 1."),
		"parent_based": boolean("Default true."),
	}, "sampler")
	admin := e(403, "FORBIDDEN: ROLE_ADMIN is required.")
	return map[string]opDoc{
		opGetLogLevel: {
			desc: "The log level of the node asked (`SVC_LOG_LEVEL` at start). Served as the compatible system serves it, outside its OpenAPI document.",
			ok:   okJSON("The level.", levelView), errs: []errDoc{admin},
		},
		opSetLogLevel: {
			desc: "Sets the log level at once, until the node restarts (`SVC_LOG_LEVEL` is read at start). An unknown level name means `info`, " +
				"as in the compatible system; `warning` is `warn`.",
			params: []*Parameter{scope},
			body:   jsonBody("The level.", obj("", Props{"level": str("`debug`, `info`, `warn` or `error`.")}, "level"), true),
			ok:     okJSON("The new level and the one before.", levelSet),
			errs:   []errDoc{e(400, "BAD_REQUEST: no body, not JSON, no `level`, or an unknown `scope`."), admin},
		},
		opGetTraceSampler: {
			desc: "Which traces the node records when `SVC_OTEL_ENABLED` is on (at start: `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, " +
				"default parent-based always). Served as the compatible system serves it, outside its OpenAPI document.",
			ok: okJSON("The sampler.", sampler), errs: []errDoc{admin},
		},
		opSetTraceSampler: {
			desc: "Replaces the sampler at once for new traces, until the node restarts. Without `SVC_OTEL_ENABLED` the setting is kept " +
				"and nothing is traced.",
			params: []*Parameter{scope},
			body:   jsonBody("The sampler.", samplerIn, true),
			ok:     okJSON("The sampler now in use.", sampler),
			errs:   []errDoc{e(400, "BAD_REQUEST: an unknown `sampler`, `ratio` missing, out of (0, 1] or given without `ratio`, or an unknown `scope`."), admin},
		},
	}
}

// clusterScope reads the scope query parameter: false for node (the
// default), true for cluster.
func clusterScope(ctx *fasthttp.RequestCtx) (bool, error) {
	raw := ctx.QueryArgs().Peek("scope")
	switch string(raw) {
	case "", "node":
		return false, nil
	case "cluster":
		return true, nil
	}
	return false, badParam("scope", string(raw))
}

func adminSwitchHandlers(s *Server) map[string]fasthttp.RequestHandler {
	sw := s.deps.Switches
	if sw == nil {
		return nil
	}
	bus := s.deps.SwitchBus
	return map[string]fasthttp.RequestHandler{
		opGetLogLevel: func(ctx *fasthttp.RequestCtx) { s.writeJSON(ctx, sw.Level()) },
		opSetLogLevel: func(ctx *fasthttp.RequestCtx) {
			all, err := clusterScope(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			level, err := switches.ParseLevelBody(ctx.PostBody())
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			if !all || bus == nil {
				s.writeJSON(ctx, sw.SetLevel(level))
				return
			}
			v, err := bus.SetLevel(level)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			s.writeJSON(ctx, v)
		},
		opGetTraceSampler: func(ctx *fasthttp.RequestCtx) { s.writeJSON(ctx, sw.SamplerConfig()) },
		opSetTraceSampler: func(ctx *fasthttp.RequestCtx) {
			all, err := clusterScope(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			c, err := switches.ParseSamplerBody(ctx.PostBody())
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			if !all || bus == nil {
				s.writeJSON(ctx, sw.SetSampler(c))
				return
			}
			v, err := bus.SetSampler(c)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			s.writeJSON(ctx, v)
		},
	}
}
