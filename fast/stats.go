package fast

import (
	"bytes"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/platform/apierr"
	"svc/storage"
)

// statsHandlers serves /entity/stats… from the entity service.
func statsHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Entities
	if svc == nil {
		return nil
	}
	h := &entityAPI{s: s, svc: svc}
	return map[string]fasthttp.RequestHandler{
		"getEntityStatistics":                  h.stats,
		"getEntityStatisticsForModel":          h.statsForModel,
		"getEntityStatisticsByState":           h.statsByState,
		"getEntityStatisticsByStateForModel":   h.statsByState,
		"queryGroupedEntityStatisticsForModel": h.groupedStats,
	}
}

func appendModelCount(b []byte, c entity.ModelCount) []byte {
	b = append(b, `{"modelName":`...)
	b = appendJSONString(b, c.Key.Name)
	b = append(b, `,"modelVersion":`...)
	b = strconv.AppendInt(b, int64(c.Key.Version), 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, c.Count, 10)
	return append(b, '}')
}

func (h *entityAPI) stats(ctx *fasthttp.RequestCtx) {
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	cs, err := h.svc.CountByModel(dctx(ctx), PrincipalOf(ctx).TenantID, at)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, '[')
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendModelCount(b, c)
		}
		return append(b, ']')
	})
}

func (h *entityAPI) statsForModel(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	c, err := h.svc.CountForModel(dctx(ctx), PrincipalOf(ctx).TenantID, key, at)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte { return appendModelCount(b, c) })
}

// statsByState serves both by-state forms; the model is present when the
// route binds {entityName}/{modelVersion}. states is a repeated parameter
// (?states=A&states=B); "?states=" selects the empty state.
func (h *entityAPI) statsByState(ctx *fasthttp.RequestCtx) {
	var key *storage.ModelKey
	if ctx.UserValue("modelVersion") != nil {
		k, err := entityKey(ctx)
		if err != nil {
			h.fail(ctx, err)
			return
		}
		key = &k
	}
	var filter entity.StateFilter
	if vs := ctx.QueryArgs().PeekMulti("states"); len(vs) > 0 {
		filter = make(entity.StateFilter, len(vs))
		for i, v := range vs {
			filter[i] = string(v)
		}
	}
	if err := entity.CheckStates(filter); err != nil {
		h.fail(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	cs, err := h.svc.CountByState(dctx(ctx), PrincipalOf(ctx).TenantID, key, filter, at)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, '[')
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"modelName":`...)
			b = appendJSONString(b, c.Model.Name)
			b = append(b, `,"modelVersion":`...)
			b = strconv.AppendInt(b, int64(c.Model.Version), 10)
			b = append(b, `,"state":`...)
			b = appendJSONString(b, c.State)
			b = append(b, `,"count":`...)
			b = strconv.AppendInt(b, c.Count, 10)
			b = append(b, '}')
		}
		return append(b, ']')
	})
}

func (h *entityAPI) groupedStats(ctx *fasthttp.RequestCtx) {
	// Path parameters are taken raw: a non-numeric version is no model.
	key := storage.ModelKey{Name: pathText(ctx, "entityName")}
	v, err := strconv.ParseInt(routeParam(ctx, "modelVersion"), 10, 32)
	if err != nil {
		key.Version = -1
	} else {
		key.Version = int(v)
	}
	// Grouped stats answer an oversized body 413 BAD_REQUEST, unlike the
	// entity writes' 400 (docs/decisions/0003-http-surface-and-routing.md).
	b := ctx.PostBody()
	if len(b) > entity.MaxBodyBytes {
		h.s.writeProblem(ctx, NewProblem(apierr.PayloadTooLarge, "request payload exceeds maximum allowed limit of 10MB"))
		return
	}
	q, err := decodeGroupedQuery(b)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	g, err := h.svc.GroupedStats(dctx(ctx), PrincipalOf(ctx).TenantID, key, q)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, '[')
		for i, bk := range g.Buckets {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"groupKey":[`...)
			for j, p := range bk.Key {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"path":`...)
				b = appendJSONString(b, p.Path)
				b = append(b, `,"value":`...)
				if p.Value == nil {
					b = append(b, "null"...)
				} else {
					b = appendJSONString(b, *p.Value)
				}
				b = append(b, '}')
			}
			b = append(b, `],"count":`...)
			b = strconv.AppendInt(b, bk.Count, 10)
			if len(g.Aliases) > 0 {
				b = append(b, `,"aggregations":{`...)
				for j, a := range g.Aliases {
					if j > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, a)
					b = append(b, ':')
					if v := bk.Aggs[j]; v == nil {
						b = append(b, "null"...)
					} else {
						b = strconv.AppendFloat(b, *v, 'g', -1, 64)
					}
				}
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		return append(b, ']')
	})
}

// groupedRequest is the body of the grouped statistics query.
type groupedRequest struct {
	GroupBy      []string                 `json:"groupBy"`
	Condition    json.RawMessage          `json:"condition"`
	Aggregations []entity.AggregationSpec `json:"aggregations"`
	PointInTime  *string                  `json:"pointInTime"`
	Limit        *int                     `json:"limit"`
}

// decodeGroupedQuery reads the grouped statistics body: unknown fields and
// a pointInTime that is not RFC 3339 (or outside storage.InstantInRange)
// are 400 MALFORMED_REQUEST.
func decodeGroupedQuery(body []byte) (*entity.GroupedQuery, error) {
	var req groupedRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, apierr.New(apierr.MalformedRequest, "invalid request body: "+err.Error())
	}
	q := &entity.GroupedQuery{GroupBy: req.GroupBy, Condition: req.Condition, Aggregations: req.Aggregations, Limit: req.Limit}
	if req.PointInTime != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.PointInTime)
		if err != nil || !storage.InstantInRange(t) {
			return nil, apierr.New(apierr.MalformedRequest, "invalid pointInTime: an RFC 3339 instant "+storage.InstantRangeText+" is expected",
				apierr.P("field", "pointInTime"), apierr.P("invalidValue", *req.PointInTime))
		}
		q.At = &t
	}
	return q, nil
}
