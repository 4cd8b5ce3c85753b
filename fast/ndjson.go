package fast

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/valyala/bytebufferpool"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/platform/apierr"
	"svc/storage"
)

// The NDJSON routes are svc extensions for bulk work: a streamed create of
// any length and a streamed read of a model's entities (svc import and svc
// export use them). Only these routes read a request body as a stream;
// every other route gets its body whole and within the body limit
// (wholeBody).
const (
	opCreateNDJSON = "createEntitiesNdjson"
	opExportNDJSON = "exportEntitiesNdjson"
	ndjsonPath     = "/entity/ndjson/"
)

func ndjsonRoutes() []Route {
	return []Route{
		{"POST", "/entity/ndjson/{entityName}/{modelVersion}", opCreateNDJSON, TagEntity, "Create entities from a newline-delimited JSON stream", Authenticated, nil},
		{"GET", "/entity/ndjson/{entityName}/{modelVersion}", opExportNDJSON, TagEntity, "Stream a model's entities as newline-delimited JSON", Authenticated, nil},
	}
}

func ndjsonDocs() map[string]opDoc {
	pWindow := query("transactionWindow", "Documents per transaction; each chunk commits as it is read.", intRange("int32", 1, 1000, 100))
	streamResult := &Schema{
		Type: SchemaType{"object"},
		Properties: Props{
			"entitiesCreated": &Schema{Type: SchemaType{"integer"}},
			"linesRead":       &Schema{Type: SchemaType{"integer"}},
			"transactions": &Schema{Type: SchemaType{"array"}, Items: &Schema{
				Type: SchemaType{"object"},
				Properties: Props{
					"transactionId": uuidS(""),
					"firstLine":     &Schema{Type: SchemaType{"integer"}},
					"lastLine":      &Schema{Type: SchemaType{"integer"}},
					"entities":      &Schema{Type: SchemaType{"integer"}},
				},
			}},
		},
	}
	return map[string]opDoc{
		opCreateNDJSON: {
			desc: "The body is newline-delimited JSON (one object per line, blank lines skipped) of any length; it is read as it " +
				"arrives and every `transactionWindow` documents commit in one transaction, so the server holds one chunk at a time. " +
				"The rules of collection create apply (model locked, document validation, workflow). On a bad line the answer is the " +
				"line's error with `properties.line`, `properties.linesCommitted`, `properties.entitiesCreated` and " +
				"`properties.transactions`: everything before the line's chunk is committed, nothing of that chunk. " +
				"Not capped by SVC_MAX_ENTITIES_PER_REQUEST: the stream is the bulk path.",
			params: []*Parameter{pWindow},
			body: &RequestBody{Description: "Newline-delimited JSON objects.", Required: true,
				Content: map[string]*MediaType{"application/x-ndjson": {Schema: &Schema{Type: SchemaType{"string"}}}}},
			ok: okJSON("Every line committed.", streamResult),
			errs: []errDoc{eOf(400, "BAD_REQUEST: a line is not a JSON object (properties.line), or a parameter does not parse."),
				eOf(404, "MODEL_NOT_FOUND."), eOf(409, "MODEL_NOT_LOCKED."),
				eOf(400, "WORKFLOW_FAILED: the workflow refused a chunk (properties.firstLine, properties.lastLine).")},
		},
		opExportNDJSON: {
			desc: "Every live entity of the model as of `pointInTime` (default: now, fixed when the request arrives and returned in " +
				"`X-Point-In-Time`), one envelope per line, streamed as it is read. `condition` selects entities with the search " +
				"condition language (URL-encoded JSON). A failure after the first line ends the stream with a line " +
				"`{\"error\":{…problem…}}`.",
			params: []*Parameter{
				query("pointInTime", "Read as at this instant (RFC 3339); default now."+instantRangeDoc, dateTime("")),
				query("condition", "A search condition (JSON, URL-encoded); default every entity.", &Schema{Type: SchemaType{"string"}}),
			},
			ok: &Response{Description: "Newline-delimited entity envelopes.",
				Content: content("application/x-ndjson", &Schema{Type: SchemaType{"string"}})},
			errs: []errDoc{eOf(400, "BAD_REQUEST, INVALID_CONDITION, INVALID_FIELD_PATH or CONDITION_TYPE_MISMATCH."),
				eOf(404, "MODEL_NOT_FOUND.")},
		},
	}
}

func eOf(status int, desc string) errDoc { return errDoc{status, desc} }

func ndjsonHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.Entities == nil {
		return nil
	}
	h := &ndjsonAPI{s: s, svc: s.deps.Entities}
	return map[string]fasthttp.RequestHandler{
		opCreateNDJSON: h.create,
		opExportNDJSON: h.export,
	}
}

type ndjsonAPI struct {
	s   *Server
	svc *entity.Service
}

type streamTx struct {
	TransactionID string `json:"transactionId"`
	FirstLine     int    `json:"firstLine"`
	LastLine      int    `json:"lastLine"`
	Entities      int    `json:"entities"`
}

type streamAnswer struct {
	EntitiesCreated int        `json:"entitiesCreated"`
	LinesRead       int        `json:"linesRead"`
	Transactions    []streamTx `json:"transactions"`
}

func (h *ndjsonAPI) create(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	w, err := window(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	// The read timeout bounds each chunk, not the whole stream: a
	// gigabyte takes longer than any sensible request timeout.
	before := func() {
		if t := h.s.cfg.HTTPReadTimeout; t > 0 {
			if c := ctx.Conn(); c != nil {
				_ = c.SetReadDeadline(time.Now().Add(t))
			}
		}
	}
	var whole bool
	h.s.idempotent(ctx, keyedWrite{stream: true, whole: &whole, encode: encodeStream, run: func(dc context.Context) bool {
		res, err := h.svc.CreateStream(dc, actorOf(ctx), key, streamBody(ctx), w, before)
		if err != nil {
			h.s.writeError(ctx, err)
			return false
		}
		ans := streamAnswerOf(res)
		if whole = res.Err == nil; whole {
			h.s.writeJSON(ctx, &ans)
			return len(res.Chunks) > 0
		}
		committed := 0
		if n := len(res.Chunks); n > 0 {
			committed = res.Chunks[n-1].LastLine
		}
		e := *res.Err
		e.Props = append(append([]apierr.Prop(nil), res.Err.Props...),
			apierr.P("linesCommitted", committed), apierr.P("entitiesCreated", res.Entities), apierr.P("transactions", ans.Transactions))
		if res.ErrLine > 0 && !hasProp(e.Props, "line") {
			e.Props = append(e.Props, apierr.P("line", res.ErrLine))
		}
		// The rest of the body was not read: the connection cannot carry
		// another request.
		ctx.SetConnectionClose()
		h.s.writeError(ctx, &e)
		return len(res.Chunks) > 0
	}})
}

// streamAnswerOf is the answer of a streamed create that went through.
func streamAnswerOf(res *entity.StreamResult) streamAnswer {
	ans := streamAnswer{EntitiesCreated: res.Entities, LinesRead: res.Lines, Transactions: make([]streamTx, len(res.Chunks))}
	for i, c := range res.Chunks {
		ans.Transactions[i] = streamTx{uuid.UUID(c.TxID).String(), c.FirstLine, c.LastLine, c.Entities}
	}
	return ans
}

// encodeStream is the answer of a streamed create for its progress.
func encodeStream(progress any) (int, []byte) {
	if p, ok := progress.(*entity.StreamResult); ok {
		ans := streamAnswerOf(p)
		if b, err := json.Marshal(&ans); err == nil {
			return fasthttp.StatusOK, b
		}
	}
	return fasthttp.StatusOK, nil
}

func hasProp(ps []apierr.Prop, k string) bool {
	for _, p := range ps {
		if p.Key == k {
			return true
		}
	}
	return false
}

func (h *ndjsonAPI) export(ctx *fasthttp.RequestCtx) {
	key, err := entityKey(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	atp, err := queryInstant(ctx, "pointInTime")
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	at := time.Now().UTC()
	if atp != nil {
		at = *atp
	}
	cond := ctx.QueryArgs().Peek("condition")
	walk, err := h.svc.ExportStream(dctx(ctx), PrincipalOf(ctx).TenantID, key, at, cond)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetContentType("application/x-ndjson")
	ctx.Response.Header.Set("X-Point-In-Time", at.Format(time.RFC3339Nano))
	log := h.s.log
	// The walk runs after the handler returns, while fasthttp writes the
	// body; the request context is not used there, and a client that
	// goes away ends the walk through the write error.
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		buf := make([]byte, 0, 4096)
		err := walk(context.Background(), func(e *storage.Entity) error {
			buf = AppendEnvelope(buf[:0], e, nil)
			buf = append(buf, '\n')
			_, err := w.Write(buf)
			return err
		})
		if err != nil {
			var line []byte
			if e, ok := apierr.As(err); ok {
				line, _ = json.Marshal(map[string]any{"error": map[string]any{"errorCode": e.Code, "detail": e.Message}})
			} else {
				log.Error("ndjson export failed", "model", key.Name, "version", key.Version, "err", err)
				line = []byte(`{"error":{"errorCode":"SERVER_ERROR","detail":"the export stopped: internal error"}}`)
			}
			w.Write(line)
			w.WriteByte('\n')
		}
		w.Flush()
	})
}

// wholeBody gives every route but the streamed ones its body whole, read
// before routing and within SVC_HTTP_MAX_BODY_BYTES. The server streams request
// bodies (StreamRequestBody) so that the NDJSON create can read a body of
// any length; fasthttp then pre-reads only the first 8 KiB, hands longer
// and chunked bodies over as a stream, and would turn a read error into
// the body's text. Here a body over the limit is a 413 and a broken one a
// 400, each before any handler runs.
func (s *Server) wholeBody(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	streamed := []byte(s.cfg.ContextPath + ndjsonPath)
	limit := s.maxBody()
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.Request.IsBodyStream() || (ctx.IsPost() && bytes.HasPrefix(ctx.Path(), streamed)) {
			next(ctx)
			return
		}
		if cl := ctx.Request.Header.ContentLength(); cl > limit {
			ctx.SetConnectionClose()
			s.writeProblem(ctx, s.bodyTooLarge())
			return
		}
		buf := bodyBufs.Get()
		defer bodyBufs.Put(buf)
		n, err := readAtMost(ctx.RequestBodyStream(), buf, limit)
		switch {
		case err != nil:
			ctx.SetConnectionClose()
			s.writeProblem(ctx, &Problem{Code: apierr.BadRequest, Message: "failed to read the request body"})
			return
		case n > limit:
			ctx.SetConnectionClose()
			s.writeProblem(ctx, s.bodyTooLarge())
			return
		}
		ctx.Request.SetBody(buf.B)
		next(ctx)
	}
}

var bodyBufs bytebufferpool.Pool

// readAtMost reads r into buf until EOF or until more than limit bytes
// are in, without the io.LimitReader allocation of the obvious form.
func readAtMost(r io.Reader, buf *bytebufferpool.ByteBuffer, limit int) (int, error) {
	b := buf.B[:0]
	defer func() { buf.B = b }()
	for len(b) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return len(b), nil
		}
		if err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}
