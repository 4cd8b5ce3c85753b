package fast

import (
	"github.com/valyala/fasthttp"

	"svc/message"
	"svc/platform/apierr"
)

// messageHandlers serves /message/… when a message store is configured.
func messageHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.Messages == nil {
		return nil
	}
	h := &messageAPI{s: s, svc: message.New(s.deps.Messages)}
	return map[string]fasthttp.RequestHandler{
		"newMessage":     h.post,
		"getMessage":     h.get,
		"deleteMessage":  h.delete,
		"deleteMessages": h.deleteMany,
	}
}

type messageAPI struct {
	s   *Server
	svc *message.Service
}

func (h *messageAPI) tooLarge(ctx *fasthttp.RequestCtx) bool {
	if len(ctx.PostBody()) <= message.MaxBodyBytes {
		return false
	}
	h.s.writeProblem(ctx, NewProblem(apierr.PayloadTooLarge, "request payload exceeds maximum allowed limit of 10MB"))
	return true
}

func (h *messageAPI) post(ctx *fasthttp.RequestCtx) {
	if h.tooLarge(ctx) {
		return
	}
	rh := &ctx.Request.Header
	hd := &message.Header{
		ContentType: string(rh.ContentType()), ContentLength: int64(rh.ContentLength()),
		ContentEncoding: string(rh.Peek("Content-Encoding")), MessageID: string(rh.Peek("X-Message-ID")),
		UserID: string(rh.Peek("X-User-ID")), Recipient: string(rh.Peek("X-Recipient")),
		ReplyTo: string(rh.Peek("X-Reply-To")), CorrelationID: string(rh.Peek("X-Correlation-ID")),
	}
	c, err := h.svc.Post(dctx(ctx), PrincipalOf(ctx).TenantID, pathText(ctx, "subject"), hd, ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b := append([]byte(nil), `[{"entityIds":[`...)
	b = appendUUID(b, c.ID)
	b = append(b, `],"transactionId":`...)
	b = appendUUID(b, c.TransactionID)
	b = append(b, "}]"...)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

func (h *messageAPI) get(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "messageId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	m, err := h.svc.Get(dctx(ctx), PrincipalOf(ctx).TenantID, id)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b := make([]byte, 0, len(m.Header)+len(m.MetaData)+len(m.Content)+40)
	b = append(b, `{"header":`...)
	b = append(b, m.Header...)
	b = append(b, `,"metaData":`...)
	b = append(b, m.MetaData...)
	b = append(b, `,"content":`...)
	b = append(b, m.Content...)
	b = append(b, '}')
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

func (h *messageAPI) delete(ctx *fasthttp.RequestCtx) {
	id, err := uuidParam(ctx, "messageId")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	if err := h.svc.Delete(dctx(ctx), PrincipalOf(ctx).TenantID, id); err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b := append([]byte(nil), `{"entityIds":[`...)
	b = appendUUID(b, id)
	b = append(b, "]}"...)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

func (h *messageAPI) deleteMany(ctx *fasthttp.RequestCtx) {
	if h.tooLarge(ctx) {
		return
	}
	ids, err := h.svc.DeleteMany(dctx(ctx), PrincipalOf(ctx).TenantID, ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	b := append([]byte(nil), `[{"entityIds":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	b = append(b, `],"success":true}]`...)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
