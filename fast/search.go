package fast

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/search"
)

func init() { registerArea(searchHandlers) }

// searchHandlers serves /search/… when a search service is configured;
// the async operations also need its job store.
func searchHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Search
	if svc == nil {
		return nil
	}
	h := &searchAPI{s: s, svc: svc}
	m := map[string]fasthttp.RequestHandler{"searchEntities": h.direct}
	if svc.Async() {
		m["submitAsyncSearchJob"] = h.submit
		m["getAsyncSearchStatus"] = h.status
		m["getAsyncSearchResults"] = h.results
		m["cancelAsyncSearch"] = h.cancel
	}
	return m
}

type searchAPI struct {
	s   *Server
	svc *search.Service
}

func sortParams(ctx *fasthttp.RequestCtx) []string {
	var out []string
	for _, v := range ctx.QueryArgs().PeekMulti("sort") {
		out = append(out, string(v))
	}
	return out
}

// direct streams the matches as NDJSON. The whole result is known before
// the first byte is written (bounded-or-fail), so an error is always a
// clean problem response.
func (h *searchAPI) direct(ctx *fasthttp.RequestCtx) { h.search(ctx, false) }

// search runs a direct search; asArray answers one application/json array
// instead of NDJSON (the client-template route of search_compat.go).
func (h *searchAPI) search(ctx *fasthttp.RequestCtx, asArray bool) {
	key, err := entityKey(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	p := PrincipalOf(ctx)
	es, err := h.svc.Direct(dctx(ctx), &search.DirectRequest{Tenant: p.TenantID, Model: key, Condition: ctx.PostBody(),
		Sort: sortParams(ctx), Limit: ctx.QueryArgs().Peek("limit"), At: at})
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	bp := entityBufs.Get().(*[]byte)
	b := (*bp)[:0]
	if asArray {
		b = append(b, '[')
		for i, e := range es {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendEnvelope(b, e, nil)
		}
		b = append(b, ']')
		ctx.SetContentType("application/json")
	} else {
		for _, e := range es {
			b = AppendEnvelope(b, e, nil)
			b = append(b, '\n')
		}
		ctx.SetContentType("application/x-ndjson")
	}
	ctx.SetBody(b)
	if cap(b) <= maxPooledEntityBuf {
		*bp = b
		entityBufs.Put(bp)
	}
}

func (h *searchAPI) submit(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	p := PrincipalOf(ctx)
	id, err := h.svc.Submit(dctx(ctx), &search.AsyncRequest{Tenant: p.TenantID, Model: key, Condition: ctx.PostBody(),
		Sort: sortParams(ctx), At: at})
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(appendUUID(nil, id))
}

func (h *searchAPI) status(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "jobId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	st, err := h.svc.JobStatus(dctx(ctx), PrincipalOf(ctx).TenantID, id)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	j := st.Job
	b := append([]byte(nil), `{"searchJobStatus":`...)
	b = appendJSONString(b, j.Status)
	b = append(b, `,"createTime":`...)
	b = appendTime(b, j.CreatedAt)
	b = append(b, `,"entitiesCount":`...)
	b = strconv.AppendInt(b, j.Count, 10)
	b = append(b, `,"calculationTimeMillis":`...)
	b = strconv.AppendInt(b, j.CalcMillis, 10)
	if !j.FinishedAt.IsZero() {
		b = append(b, `,"finishTime":`...)
		b = appendTime(b, j.FinishedAt)
	}
	b = append(b, `,"expirationDate":`...)
	b = appendTime(b, st.Expiration)
	b = append(b, '}')
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// pageParam reads pageSize/pageNumber (docs/decisions/0021-search.md): integers,
// pageSize ≤ 0 means the default, caps on both.
func pageParam(ctx *fasthttp.RequestCtx, name string, def int) (int, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return def, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, apierr.New(apierr.BadRequest, "invalid "+name, apierr.P("parameter", name))
	}
	return n, nil
}

func (h *searchAPI) results(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "jobId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	size, err := pageParam(ctx, "pageSize", search.DefaultLimit)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	number, err := pageParam(ctx, "pageNumber", 0)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	switch {
	case size <= 0:
		size = search.DefaultLimit
	case size > search.MaxLimit:
		h.s.writeError(ctx, apierr.New(apierr.BadRequest, "pageSize exceeds maximum 10000", apierr.P("parameter", "pageSize")))
		return
	}
	if number < 0 || number > 214748 {
		h.s.writeError(ctx, apierr.New(apierr.BadRequest, "invalid pageNumber", apierr.P("parameter", "pageNumber")))
		return
	}
	pg, err := h.svc.Results(dctx(ctx), PrincipalOf(ctx).TenantID, id, number, size)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	bp := entityBufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"content":[`...)
	for i, e := range pg.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendEnvelope(b, e, nil)
	}
	pages := (pg.Total + int64(pg.Size) - 1) / int64(pg.Size)
	b = append(b, `],"page":{"number":`...)
	b = strconv.AppendInt(b, int64(pg.Number), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(pg.Size), 10)
	b = append(b, `,"totalElements":`...)
	b = strconv.AppendInt(b, pg.Total, 10)
	b = append(b, `,"totalPages":`...)
	b = strconv.AppendInt(b, pages, 10)
	b = append(b, "}}"...)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	if cap(b) <= maxPooledEntityBuf {
		*bp = b
		entityBufs.Put(bp)
	}
}

func (h *searchAPI) cancel(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "jobId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	if err := h.svc.Cancel(dctx(ctx), PrincipalOf(ctx).TenantID, id); err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"isCancelled":true,"cancelled":true,"currentSearchJobStatus":"CANCELLED"}`)
}
