package fast

import (
	"strconv"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/audit"
	"svc/storage"
)

func init() { registerArea(auditHandlers) }

// auditHandlers serves /audit/entity/… when an audit service is
// configured. Reads run in the principal's tenant: another tenant's entity
// is 404.
func auditHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Audit
	if svc == nil {
		return nil
	}
	h := &auditAPI{s: s, svc: svc}
	return map[string]fasthttp.RequestHandler{
		"searchEntityAuditEvents":      h.list,
		"getStateMachineFinishedEvent": h.finished,
	}
}

type auditAPI struct {
	s   *Server
	svc *audit.Service
}

// auditQuery parses the list parameters (docs/decisions/0022-audit-and-messages.md).
func auditQuery(ctx *fasthttp.RequestCtx) (audit.Query, error) {
	args := ctx.QueryArgs()
	var q audit.Query
	if vs := args.PeekMulti("eventType"); len(vs) > 0 {
		q.Kinds = make([]string, len(vs))
		for i, v := range vs {
			q.Kinds[i] = string(v)
		}
	}
	q.Severity = string(args.Peek("severity"))
	if raw := args.Peek("fromUtcTime"); raw != nil {
		t, err := audit.ParseTime("fromUtcTime", string(raw))
		if err != nil {
			return q, err
		}
		q.From = t
	}
	if raw := args.Peek("toUtcTime"); raw != nil {
		t, err := audit.ParseTime("toUtcTime", string(raw))
		if err != nil {
			return q, err
		}
		q.To = t
	}
	if args.Has("transactionId") {
		id, err := uuidQuery(ctx, "transactionId")
		if err != nil {
			return q, err
		}
		q.TxID = &id
	}
	raw := args.Peek("limit")
	limit, err := audit.ParseLimit(string(raw), raw != nil)
	if err != nil {
		return q, err
	}
	q.Limit = limit
	q.Offset = audit.ParseCursor(string(args.Peek("cursor")))
	return q, nil
}

func uuidQuery(ctx *fasthttp.RequestCtx, name string) ([16]byte, error) {
	raw := string(ctx.QueryArgs().Peek(name))
	u, err := uuid.Parse(raw)
	if err != nil {
		return u, badParam(name, raw)
	}
	return u, nil
}

func (h *auditAPI) list(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	q, err := auditQuery(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	p := PrincipalOf(ctx)
	page, err := h.svc.List(dctx(ctx), p.TenantID, id, q)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	sendPooled(ctx, func(b []byte) []byte {
		b = append(b, `{"items":[`...)
		for i := range page.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendAuditEvent(b, &page.Events[i], p.TenantID)
		}
		b = append(b, `],"pagination":{"hasNext":`...)
		b = strconv.AppendBool(b, page.HasNext)
		if page.HasNext {
			b = append(b, `,"nextCursor":`...)
			b = appendJSONString(b, page.NextCursor)
		}
		return append(b, "}}"...)
	})
}

func (h *auditAPI) finished(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "entityId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	txID, err := uuidParam(ctx, "transactionId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	p := PrincipalOf(ctx)
	e, err := h.svc.Finished(dctx(ctx), p.TenantID, id, txID)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	sendPooled(ctx, func(b []byte) []byte { return appendAuditEvent(b, e, p.TenantID) })
}

// sendPooled writes a JSON body built in a pooled buffer.
func sendPooled(ctx *fasthttp.RequestCtx, fill func([]byte) []byte) {
	bp := entityBufs.Get().(*[]byte)
	out := fill((*bp)[:0])
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
	if cap(out) <= maxPooledEntityBuf {
		*bp = out
		entityBufs.Put(bp)
	}
}

// appendAuditEvent writes one item in the shape of its kind (docs/decisions/0022-audit-and-messages.md):
// EntityChange with changeType, system and actor; StateMachine with
// eventType, state, details and data. DELETE events carry entityId,
// transactionId and actor.legalId too (the compatible system's omission is
// not copied).
func appendAuditEvent(b []byte, e *storage.AuditEvent, tenant string) []byte {
	b = append(b, `{"auditEventType":`...)
	b = appendJSONString(b, e.Kind)
	if e.Kind == storage.AuditEntityChange {
		b = append(b, `,"changeType":`...)
	} else {
		b = append(b, `,"eventType":`...)
	}
	b = appendJSONString(b, e.Type)
	b = append(b, `,"severity":"`+audit.Severity+`","utcTime":`...)
	b = appendTime(b, e.Time)
	b = append(b, `,"microsTime":`...)
	b = strconv.AppendInt(b, e.Time.UnixMicro(), 10)
	if e.Kind == storage.AuditEntityChange {
		b = append(b, `,"system":false`...)
	}
	b = append(b, `,"entityId":`...)
	b = appendUUID(b, e.EntityID)
	b = append(b, `,"transactionId":`...)
	b = appendUUID(b, e.TxID)
	if e.Kind == storage.AuditEntityChange {
		b = append(b, `,"actor":{"id":`...)
		b = appendJSONString(b, e.User)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, e.User)
		b = append(b, `,"legalId":`...)
		b = appendJSONString(b, tenant)
		return append(b, "}}"...)
	}
	b = append(b, `,"state":`...)
	b = appendJSONString(b, e.State)
	b = append(b, `,"details":`...)
	b = appendJSONString(b, e.Details)
	b = append(b, `,"data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	return append(b, '}')
}
