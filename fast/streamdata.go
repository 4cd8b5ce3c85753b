package fast

import (
	"bufio"
	"context"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/storage"
	"svc/streamdata"
)

// streamDataHandlers serves /platform-api/stream-data/… when a stream-data
// service is configured.
func streamDataHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.StreamData
	if svc == nil {
		return nil
	}
	h := &streamDataAPI{s: s, svc: svc}
	return map[string]fasthttp.RequestHandler{
		"getStreamDataConfig":    h.getConfig,
		"updateStreamDataConfig": h.updateConfig,
		"saveStreamDataConfig":   h.saveConfig,
		"deleteStreamDataConfig": h.deleteConfig,
		"getAllConfigs":          h.listConfigs,
		"delete":                 h.deleteData,
		"exportAll_1":            h.exportAll,
		"exportAll":              h.exportByClass,
		"exportByIds":            h.exportByIDs,
		"getStreamData":          h.get,
		"importContainer":        h.importContainer,
		"getIndexs":              h.indexList,
		"getQueryPlan":           h.queryPlan,
	}
}

type streamDataAPI struct {
	s   *Server
	svc *streamdata.Service
}

// halJSON is the media type the contract declares for these operations.
const halJSON = "application/hal+json"

func streamPrincipal(ctx *fasthttp.RequestCtx) streamdata.Principal {
	p := PrincipalOf(ctx)
	user := p.UserName
	if user == "" {
		user = p.UserID
	}
	return streamdata.Principal{Tenant: p.TenantID, User: user, UserID: p.UserID, Kind: p.Kind}
}

func (h *streamDataAPI) reply(ctx *fasthttp.RequestCtx, b []byte, err error) {
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetContentType(halJSON)
	ctx.SetBody(b)
}

// replyConfigs renders saved definitions with enc (a plain array or the
// export container).
func (h *streamDataAPI) replyConfigs(ctx *fasthttp.RequestCtx, cs []*storage.StreamConfig, err error, enc func([]byte, []*storage.StreamConfig) []byte) {
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.reply(ctx, enc(nil, cs), nil)
}

func (h *streamDataAPI) empty(ctx *fasthttp.RequestCtx, err error) {
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
}

func (h *streamDataAPI) getConfig(ctx *fasthttp.RequestCtx) {
	c, err := h.svc.GetConfig(dctx(ctx), PrincipalOf(ctx).TenantID, string(ctx.QueryArgs().Peek("configId")))
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.reply(ctx, appendStreamConfig(nil, c), nil)
}

func (h *streamDataAPI) saveConfig(ctx *fasthttp.RequestCtx) {
	c, err := decodeStreamConfig(ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	id, err := h.svc.SaveConfig(dctx(ctx), streamPrincipal(ctx), c)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.reply(ctx, appendUUID(nil, id), nil)
}

func (h *streamDataAPI) updateConfig(ctx *fasthttp.RequestCtx) {
	c, err := decodeStreamConfig(ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.empty(ctx, h.svc.UpdateConfig(dctx(ctx), streamPrincipal(ctx), c, string(ctx.QueryArgs().Peek("configId"))))
}

func (h *streamDataAPI) deleteConfig(ctx *fasthttp.RequestCtx) {
	h.empty(ctx, h.svc.DeleteConfig(dctx(ctx), PrincipalOf(ctx).TenantID, string(ctx.QueryArgs().Peek("configId"))))
}

func (h *streamDataAPI) listConfigs(ctx *fasthttp.RequestCtx) {
	cs, err := h.svc.ListConfigs(dctx(ctx), PrincipalOf(ctx).TenantID)
	h.replyConfigs(ctx, cs, err, appendStreamConfigs)
}

func (h *streamDataAPI) exportAll(ctx *fasthttp.RequestCtx) {
	cs, err := h.svc.ExportConfigs(dctx(ctx), PrincipalOf(ctx).TenantID, streamdata.Export{})
	h.replyConfigs(ctx, cs, err, appendStreamContainer)
}

func (h *streamDataAPI) exportByClass(ctx *fasthttp.RequestCtx) {
	class := string(ctx.QueryArgs().Peek("entityClass"))
	if class == "" {
		h.s.writeError(ctx, missingParam("entityClass"))
		return
	}
	cs, err := h.svc.ExportConfigs(dctx(ctx), PrincipalOf(ctx).TenantID, streamdata.Export{Class: class})
	h.replyConfigs(ctx, cs, err, appendStreamContainer)
}

// exportByIDs takes includeIds repeated and comma-joined (the UI sends
// one comma-joined value).
func (h *streamDataAPI) exportByIDs(ctx *fasthttp.RequestCtx) {
	ids := []string{}
	for _, v := range ctx.QueryArgs().PeekMulti("includeIds") {
		for _, id := range strings.Split(string(v), ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		h.s.writeError(ctx, missingParam("includeIds"))
		return
	}
	cs, err := h.svc.ExportConfigs(dctx(ctx), PrincipalOf(ctx).TenantID, streamdata.Export{IDs: ids})
	h.replyConfigs(ctx, cs, err, appendStreamContainer)
}

func (h *streamDataAPI) importContainer(ctx *fasthttp.RequestCtx) {
	fail := false
	if v := ctx.QueryArgs().Peek("failOnExists"); v != nil {
		switch strings.ToLower(string(v)) {
		case "true":
			fail = true
		case "false", "":
		default:
			h.s.writeError(ctx, badParam("failOnExists", string(v)))
			return
		}
	}
	list, err := decodeStreamContainer(ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.empty(ctx, h.svc.ImportConfigs(dctx(ctx), streamPrincipal(ctx), list, fail))
}

// get streams the page: the request is parsed and compiled here (so a
// bad definition is a problem+json), then the rows go to the socket as the
// engine yields them, after the handler returns. A failure once rows are
// out cannot change the status: the rows array is closed and an "error"
// member ends the object instead of lastRowIndexPosition.
func (h *streamDataAPI) get(ctx *fasthttp.RequestCtx) {
	// A copy: the page is written after the handler returns, when the
	// request's buffer is reused, and the definition keeps slices of it.
	req, err := decodeStreamRequest(append([]byte(nil), ctx.PostBody()...))
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ps, err := h.svc.Prepare(dctx(ctx), PrincipalOf(ctx).TenantID, req)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetContentType(halJSON)
	log := h.s.log
	// The request context is not used in the writer: a client that goes
	// away ends the page through the write error.
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := writeStreamPage(context.Background(), ps, w); err != nil {
			var tail []byte
			if e, ok := apierr.As(err); ok {
				tail, _ = json.Marshal(map[string]any{"errorCode": e.Code, "detail": e.Message})
			} else {
				log.Error("stream-data page failed", "err", err)
				tail = []byte(`{"errorCode":"SERVER_ERROR","detail":"the page stopped: internal error"}`)
			}
			_, _ = w.WriteString(`],"error":`)
			_, _ = w.Write(tail)
			_ = w.WriteByte('}')
		}
		_ = w.Flush()
	})
}

func (h *streamDataAPI) deleteData(ctx *fasthttp.RequestCtx) {
	// Offset, length and the point in time are decoded and checked as for
	// a page; the delete reads the definition only.
	req, err := decodeStreamRequest(ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	res, err := h.svc.Delete(dctx(ctx), streamPrincipal(ctx), req.Def)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.reply(ctx, appendStreamDeleteResult(nil, res), nil)
}

func (h *streamDataAPI) indexList(ctx *fasthttp.RequestCtx) {
	class := string(ctx.QueryArgs().Peek("entityClass"))
	if class == "" {
		h.s.writeError(ctx, missingParam("entityClass"))
		return
	}
	ixs, err := h.svc.IndexList(dctx(ctx), PrincipalOf(ctx).TenantID, class)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.reply(ctx, appendStreamIndexes(nil, ixs), nil)
}

func (h *streamDataAPI) queryPlan(ctx *fasthttp.RequestCtx) {
	d, err := decodeStreamPlanRequest(ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	p, err := h.svc.QueryPlan(dctx(ctx), PrincipalOf(ctx).TenantID, d)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b, err := encodeStreamPlan(p)
	h.reply(ctx, b, err)
}

func missingParam(name string) error {
	return apierr.New(apierr.BadRequest, "required parameter '"+name+"' is missing", apierr.P("parameter", name))
}
