package fast

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/streamdata"
)

// streamDataExtRoutes are the stream-data extensions: user composite
// indexes that index/list reports and query-plan uses (built
// CONCURRENTLY on PostgreSQL; declarations on memory).
func streamDataExtRoutes() []Route {
	return []Route{
		{"POST", "/platform-api/stream-data/index", "createStreamDataIndex", TagPlatform, "Create a composite index for stream data (svc extension)", Authenticated, nil},
		{"DELETE", "/platform-api/stream-data/index", "dropStreamDataIndex", TagPlatform, "Drop a composite index of stream data (svc extension)", Authenticated, nil},
	}
}

func streamDataExtDocs() map[string]opDoc {
	spec := obj("A composite index: equality columns plus one range column, over one model's current entities.", Props{
		"entityClass":  str("Model as `<name>.<version>` or its model id."),
		"name":         str("Index name, unique per model."),
		"rangeColPath": str("Range field: a lifecycle name (creationDate, lastUpdateTime, state) or a data path ($.a.b, no [*])."),
		"columns":      arr(str(""), "Equality fields (data paths or state), at most 8."),
	}, "entityClass", "name", "rangeColPath")
	return map[string]opDoc{
		"createStreamDataIndex": {
			desc: "Creates a user composite index for stream reads. On PostgreSQL it is a partial btree built with " +
				"CREATE INDEX CONCURRENTLY before the call returns; index/list reports readyForQuerying from the catalogue.",
			body: jsonBody("The index.", spec, true),
			ok:   okJSON("Its id.", obj("", Props{"indexId": uuidS("")})),
			errs: []errDoc{e(400, "A field cannot be indexed."), e(404, "No such model."), e(409, "The name is taken for this model.")},
		},
		"dropStreamDataIndex": {
			desc:   "Drops a user composite index (DROP INDEX CONCURRENTLY on PostgreSQL).",
			params: []*Parameter{queryReq("indexId", "", uuidS(""))},
			ok:     okEmpty("Dropped; no body."),
			errs:   []errDoc{e(404, "No such index.")},
		},
	}
}

func streamDataExtHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.StreamData
	if svc == nil {
		return nil
	}
	h := &streamDataAPI{s: s, svc: svc}
	return map[string]fasthttp.RequestHandler{
		"createStreamDataIndex": h.createIndex,
		"dropStreamDataIndex":   h.dropIndex,
	}
}

func (h *streamDataAPI) createIndex(ctx *fasthttp.RequestCtx) {
	var spec streamdata.IndexSpec
	if err := json.Unmarshal(ctx.PostBody(), &spec); err != nil {
		h.s.writeError(ctx, apierr.New(apierr.BadRequest, "the index definition does not parse: "+err.Error()))
		return
	}
	ix, err := h.svc.CreateIndex(dctx(ctx), PrincipalOf(ctx).TenantID, &spec)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b := append([]byte(`{"indexId":`), appendUUID(nil, ix.ID)...)
	ctx.SetContentType("application/json")
	ctx.SetBody(append(b, '}'))
}

func (h *streamDataAPI) dropIndex(ctx *fasthttp.RequestCtx) {
	h.empty(ctx, h.svc.DropIndex(dctx(ctx), PrincipalOf(ctx).TenantID, string(ctx.QueryArgs().Peek("indexId"))))
}
