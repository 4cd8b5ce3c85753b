package fast

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// entityHandlers serves /entity/… when an entity service is configured.
// Every operation runs in the principal's tenant: another tenant's entity
// is absent (404).
func entityHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Entities
	if svc == nil {
		return nil
	}
	h := &entityAPI{s: s, svc: svc}
	return map[string]fasthttp.RequestHandler{
		"create":                   h.create,
		"createCollection":         h.createCollection,
		"updateCollection":         h.updateCollection,
		"getOneEntity":             h.get,
		"getAllEntities":           h.list,
		"updateSingleWithLoopback": h.update,
		"updateSingle":             h.update,
		"patchSingleWithLoopback":  h.patch,
		"patchSingle":              h.patch,
		"deleteSingleEntity":       h.delete,
		"deleteEntities":           h.deleteByModel,
		"getEntityChangesMetadata": h.changes,
		"getEntityTransitions":     h.transitions,
		"fetchEntityTransitions":   h.fetchTransitions,
	}
}

type entityAPI struct {
	s   *Server
	svc *entity.Service
}

func actorOf(ctx *fasthttp.RequestCtx) entity.Actor {
	p := PrincipalOf(ctx)
	return entity.Actor{Tenant: p.TenantID, User: p.UserID, Kind: p.Kind}
}

// pathText is a path parameter unescaped; a malformed escape is kept as sent.
func pathText(ctx *fasthttp.RequestCtx, name string) string {
	raw := routeParam(ctx, name)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

func entityKey(ctx *fasthttp.RequestCtx) (storage.ModelKey, error) {
	key, err := modelKeyParam(ctx)
	key.Name = pathText(ctx, "entityName")
	return key, err
}

func uuidParam(ctx *fasthttp.RequestCtx, name string) ([16]byte, error) {
	raw := routeParam(ctx, name)
	if id, ok := parseCanonicalUUID(raw); ok {
		return id, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return id, badParam(name, raw)
	}
	return id, nil
}

func queryUUID(ctx *fasthttp.RequestCtx, name string) (*[16]byte, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return nil, nil
	}
	id, err := uuid.ParseBytes(raw)
	if err != nil {
		return nil, badParam(name, string(raw))
	}
	b := [16]byte(id)
	return &b, nil
}

// queryInstant reads pointInTime leniently (docs/decisions/0014-entities.md).
func queryInstant(ctx *fasthttp.RequestCtx, name string) (*time.Time, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return nil, nil
	}
	t, ok := entity.ParseInstant(string(raw))
	if !ok {
		return nil, badInstant(name, string(raw))
	}
	return &t, nil
}

func queryInt(ctx *fasthttp.RequestCtx, name string, def int) (int, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return def, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		return 0, badParam(name, string(raw))
	}
	return int(n), nil
}

// window validates transactionWindow before the body is read.
func window(ctx *fasthttp.RequestCtx) (int, error) {
	w, err := queryInt(ctx, "transactionWindow", entity.DefaultWindow)
	if err != nil {
		return 0, err
	}
	return w, entity.ValidWindow(w)
}

func body(ctx *fasthttp.RequestCtx) ([]byte, error) {
	b := ctx.PostBody()
	if len(b) > entity.MaxBodyBytes {
		return nil, apierr.New(apierr.BadRequest, "failed to read body: larger than 10 MiB")
	}
	return b, nil
}

// Response buffers are pooled; a large collection answer is not kept.
var entityBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledEntityBuf = 1 << 20

func (h *entityAPI) send(ctx *fasthttp.RequestCtx, fill func([]byte) []byte) {
	bp := entityBufs.Get().(*[]byte)
	out := fill((*bp)[:0])
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
	if cap(out) <= maxPooledEntityBuf {
		*bp = out
		entityBufs.Put(bp)
	}
}

func (h *entityAPI) fail(ctx *fasthttp.RequestCtx, err error) { h.s.writeError(ctx, err) }

func (h *entityAPI) create(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.chunked(ctx, true, func(dc context.Context, b []byte, w int) (*entity.Result, error) {
		return h.svc.Create(dc, actorOf(ctx), key, routeParam(ctx, "format"), b, w)
	})
}

func (h *entityAPI) createCollection(ctx *fasthttp.RequestCtx) {
	h.chunked(ctx, true, func(dc context.Context, b []byte, w int) (*entity.Result, error) {
		items, err := decodeCollectionCreate(b)
		if err != nil {
			return nil, err
		}
		return h.svc.CreateCollection(dc, actorOf(ctx), items, w)
	})
}

func (h *entityAPI) updateCollection(ctx *fasthttp.RequestCtx) {
	h.chunked(ctx, false, func(dc context.Context, b []byte, w int) (*entity.Result, error) {
		items, err := decodeCollectionUpdate(routeParam(ctx, "format"), b)
		if err != nil {
			return nil, err
		}
		return h.svc.UpdateCollection(dc, actorOf(ctx), items, w)
	})
}

// chunked serves the writes that take a body and a transactionWindow and
// answer with the per-chunk result shape; keyed ones honour an
// Idempotency-Key.
func (h *entityAPI) chunked(ctx *fasthttp.RequestCtx, keyed bool, run func(dc context.Context, body []byte, window int) (*entity.Result, error)) {
	w, err := window(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	b, err := body(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	serve := func(dc context.Context) bool {
		res, err := run(dc, b, w)
		if err != nil {
			h.fail(ctx, err)
			return false
		}
		h.send(ctx, func(b []byte) []byte { return appendResult(b, res) })
		return len(res.Chunks) > 0
	}
	if !keyed {
		serve(dctx(ctx))
		return
	}
	h.s.idempotent(ctx, keyedWrite{encode: encodeResult, run: serve})
}

func (h *entityAPI) get(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	tx, err := queryUUID(ctx, "transactionId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	e, err := h.svc.Get(dctx(ctx), PrincipalOf(ctx).TenantID, id, at, tx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte { return AppendEnvelope(b, e, nil) })
}

func (h *entityAPI) list(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	size, err := queryInt(ctx, "pageSize", 20)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	page, err := queryInt(ctx, "pageNumber", 0)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	list, err := h.svc.List(dctx(ctx), PrincipalOf(ctx).TenantID, key, size, page, at)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, '[')
		for i, e := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendEnvelope(b, e, at)
		}
		return append(b, ']')
	})
}

func ifMatchOf(ctx *fasthttp.RequestCtx) string {
	return strings.TrimSpace(string(ctx.Request.Header.Peek("If-Match")))
}

func (h *entityAPI) update(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	b, err := body(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.s.idempotent(ctx, keyedWrite{encode: encodeResult, run: func(dc context.Context) bool {
		tx, err := h.svc.Update(dc, actorOf(ctx), id, routeParam(ctx, "format"), b, pathText(ctx, "transition"), ifMatchOf(ctx))
		if err != nil {
			h.fail(ctx, err)
			return false
		}
		h.send(ctx, func(b []byte) []byte { return appendTxResult(b, tx, id) })
		return true
	}})
}

func (h *entityAPI) patch(ctx *fasthttp.RequestCtx) {
	format := routeParam(ctx, "format")
	id, err := uuidParam(ctx, "entityId")
	if err != nil && format == "JSON" {
		h.fail(ctx, err)
		return
	}
	b, err := body(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	// A merge patch reads, merges, validates and runs the workflow before
	// it writes: when its client leaves meanwhile, it stops unwritten.
	h.s.idempotent(ctx, keyedWrite{encode: encodeResult, run: func(dc context.Context) bool {
		pctx := entity.WithClientGone(dc, clientGone(ctx))
		tx, err := h.svc.Patch(pctx, actorOf(ctx), id, format, string(ctx.Request.Header.ContentType()), ifMatchOf(ctx), b, pathText(ctx, "transition"))
		if errors.Is(err, entity.ErrClientGone) {
			// Nobody reads an answer: 499 (the client closed the request,
			// nginx's code) for the access log and metrics, no body, and
			// the connection closed.
			ctx.SetStatusCode(apierr.ClientGone.HTTPStatus())
			ctx.SetConnectionClose()
			return false
		}
		if err != nil {
			h.fail(ctx, err)
			return false
		}
		h.send(ctx, func(b []byte) []byte { return appendTxResult(b, tx, id) })
		return true
	}})
}

func (h *entityAPI) delete(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	d, err := h.svc.Delete(dctx(ctx), actorOf(ctx), id)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, `{"id":`...)
		b = appendUUID(b, d.ID)
		b = append(b, `,"modelKey":`...)
		b = appendModelKey(b, d.Model)
		b = append(b, `,"transactionId":`...)
		b = appendUUID(b, d.TxID)
		return append(b, '}')
	})
}

func (h *entityAPI) deleteByModel(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	verbose := string(ctx.QueryArgs().Peek("verbose")) == "true"
	b, err := body(ctx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	// pointInTime selects as of an instant; only a condition body uses it.
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	d, err := h.svc.DeleteByModel(dctx(ctx), actorOf(ctx), key, b, at)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.send(ctx, func(b []byte) []byte {
		b = append(b, `{"entityModelClassId":`...)
		b = appendUUID(b, d.ModelID)
		// The misspelling "Entitites" is the wire contract's.
		b = append(b, `,"deleteResult":{"idToError":{},"numberOfEntitites":`...)
		b = strconv.AppendInt(b, d.Matched, 10)
		b = append(b, `,"numberOfEntititesRemoved":`...)
		b = strconv.AppendInt(b, d.Removed, 10)
		b = append(b, '}')
		if verbose {
			b = append(b, `,"ids":[`...)
			for i, id := range d.IDs {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendUUID(b, id)
			}
			b = append(b, ']')
		}
		return append(b, '}')
	})
}

func (h *entityAPI) changes(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	at, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	cs, err := h.svc.Changes(dctx(ctx), PrincipalOf(ctx).TenantID, id, at)
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
			b = append(b, `{"changeType":"`...)
			b = append(b, c.Type...)
			b = append(b, `","timeOfChange":`...)
			b = appendTime(b, c.At)
			b = append(b, `,"user":`...)
			b = appendJSONString(b, c.User)
			if c.HasTx {
				b = append(b, `,"transactionId":`...)
				b = appendUUID(b, c.TxID)
			}
			if c.AttributedKind != "" {
				b = append(b, `,"attributedKind":`...)
				b = appendJSONString(b, c.AttributedKind)
			}
			if c.ExecID != "" {
				b = append(b, `,"executedBy":{"id":`...)
				b = appendJSONString(b, c.ExecID)
				b = append(b, `,"kind":`...)
				b = appendJSONString(b, c.ExecKind)
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		return append(b, ']')
	})
}

func (h *entityAPI) transitions(ctx *fasthttp.RequestCtx) {
	notFound := apierr.New(apierr.EntityNotFound, "entity not found")
	var at *time.Time
	if raw := ctx.QueryArgs().Peek("pointInTime"); raw != nil {
		t, err := time.Parse(time.RFC3339Nano, string(raw))
		if err != nil || !storage.InstantInRange(t) {
			h.fail(ctx, badInstant("pointInTime", string(raw)))
			return
		}
		at = &t
	}
	tx, err := queryUUID(ctx, "transactionId")
	if err != nil {
		h.fail(ctx, err)
		return
	}
	// The id is not validated as a UUID here: a bad one is simply absent.
	id, err := uuid.Parse(routeParam(ctx, "entityId"))
	if err != nil {
		if at != nil && tx != nil {
			h.fail(ctx, apierr.New(apierr.BadRequest, "pointInTime and transactionId are mutually exclusive"))
			return
		}
		h.fail(ctx, notFound)
		return
	}
	names, err := h.svc.Transitions(dctx(ctx), PrincipalOf(ctx).TenantID, id, at, tx)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.s.writeJSON(ctx, names)
}

func (h *entityAPI) fetchTransitions(ctx *fasthttp.RequestCtx) {
	class := string(ctx.QueryArgs().Peek("entityClass"))
	rawID := string(ctx.QueryArgs().Peek("entityId"))
	if class == "" || rawID == "" {
		h.fail(ctx, apierr.New(apierr.BadRequest, "entityClass and entityId are required"))
		return
	}
	// entityClass only names the model; the entity's own model decides
	// (resolved from entityId when not <name>.<version>, docs/decisions/0014-entities.md).
	id, err := uuid.Parse(rawID)
	if err != nil {
		h.fail(ctx, apierr.New(apierr.EntityNotFound, "entity not found"))
		return
	}
	names, err := h.svc.Transitions(dctx(ctx), PrincipalOf(ctx).TenantID, id, nil, nil)
	if err != nil {
		h.fail(ctx, err)
		return
	}
	h.s.writeJSON(ctx, names)
}

// AppendEnvelope writes the entity envelope; at adds meta.pointInTime (list
// only).
func AppendEnvelope(b []byte, e *storage.Entity, at *time.Time) []byte {
	b = append(b, `{"type":"ENTITY","data":`...)
	b = append(b, e.Data...)
	b = append(b, `,"meta":{"id":`...)
	b = appendUUID(b, e.ID)
	b = append(b, `,"modelKey":`...)
	b = appendModelKey(b, e.Model)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, e.State)
	b = append(b, `,"creationDate":`...)
	b = appendTime(b, e.CreatedAt)
	b = append(b, `,"lastUpdateTime":`...)
	b = appendTime(b, e.UpdatedAt)
	b = append(b, `,"transactionId":`...)
	b = appendUUID(b, e.TxID)
	if e.Transition != "" {
		b = append(b, `,"transitionForLatestSave":`...)
		b = appendJSONString(b, e.Transition)
	}
	if at != nil {
		b = append(b, `,"pointInTime":`...)
		b = appendTime(b, *at)
	}
	return append(b, "}}"...)
}

func appendModelKey(b []byte, k storage.ModelKey) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, k.Name)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(k.Version), 10)
	return append(b, '}')
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendUUID(b []byte, id [16]byte) []byte {
	b = append(b, '"')
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&15])
	}
	return append(b, '"')
}

func appendTxResult(b []byte, tx, id [16]byte) []byte {
	b = append(b, `{"transactionId":`...)
	b = appendUUID(b, tx)
	b = append(b, `,"entityIds":[`...)
	b = appendUUID(b, id)
	return append(b, "]}"...)
}

// appendAPIError writes an error element; chunk errors carry the detail
// form "<CODE>: <message>", isolated items the bare message.
func appendAPIError(b []byte, e *apierr.Error, idxName string, idx int) []byte {
	b = append(b, `{"code":`...)
	b = appendJSONString(b, e.Code.String())
	b = append(b, `,"message":`...)
	if idxName == "chunkIndex" {
		b = appendJSONString(b, e.Code.String()+": "+e.Message)
	} else {
		b = appendJSONString(b, e.Message)
	}
	b = append(b, `,"`...)
	b = append(b, idxName...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, int64(idx), 10)
	return append(b, '}')
}

// appendResult writes the chunk array of a create or collection update.
func appendResult(b []byte, r *entity.Result) []byte {
	b = append(b, '[')
	for i, c := range r.Chunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"transactionId":`...)
		b = appendUUID(b, c.TxID)
		b = append(b, `,"entityIds":[`...)
		for j, id := range c.IDs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendUUID(b, id)
		}
		b = append(b, ']')
		if len(c.Failed) > 0 {
			b = append(b, `,"failed":[`...)
			for j, f := range c.Failed {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"entityId":`...)
				b = appendUUID(b, f.ID)
				b = append(b, `,"error":`...)
				b = appendAPIError(b, f.Err, "itemIndex", f.Index)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if r.Err != nil {
		if len(r.Chunks) > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"entityIds":[],"error":`...)
		b = appendAPIError(b, r.Err, "chunkIndex", r.ErrChunk)
		b = append(b, '}')
	}
	return append(b, ']')
}

// decodeCollectionCreate reads the body of POST /entity/{format}: a JSON
// array of {model, payload} items (text and duplicate-key faults first,
// then the decode; null is not an array).
func decodeCollectionCreate(body []byte) ([]entity.CollectionItem, error) {
	if err := jsondoc.CheckProblem(body, "invalid JSON array", ""); err != nil {
		return nil, err
	}
	var items []entity.CollectionItem
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, apierr.New(apierr.BadRequest, "invalid JSON array")
	}
	if items == nil && !bytes.Equal(bytes.TrimSpace(body), []byte("[]")) {
		return nil, apierr.New(apierr.BadRequest, "invalid JSON array")
	}
	return items, nil
}

// decodeCollectionUpdate reads the body of PUT /entity/{format}: JSON only,
// a non-empty array of {id, payload, transition, ifMatch} items.
func decodeCollectionUpdate(format string, body []byte) ([]entity.UpdateItem, error) {
	if format != "JSON" {
		return nil, apierr.New(apierr.BadRequest, "collection update accepts JSON only")
	}
	if err := jsondoc.CheckProblem(body, "invalid JSON array", ""); err != nil {
		return nil, err
	}
	var items []entity.UpdateItem
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, apierr.New(apierr.BadRequest, "invalid JSON array")
	}
	if len(items) == 0 {
		return nil, apierr.New(apierr.BadRequest, "collection is empty")
	}
	return items, nil
}
