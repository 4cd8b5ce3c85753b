package fast

import (
	"bytes"
	"context"
	"hash"
	"io"

	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/idempotency"
	"svc/platform/apierr"
)

// The Idempotency-Key header of entity creates and transitions (an svc
// extension, docs/decisions/0040-idempotency-key.md). This file reads the
// header, asks the idempotency service, writes a replayed answer with
// Idempotent-Replayed: true, and hands the stored answers' encoder to the
// claim; the decisions are the service's.

const (
	hdrIdempotencyKey = "Idempotency-Key"
	hdrReplayed       = "Idempotent-Replayed"
)

// keyedWrite is one write operation under an optional key.
type keyedWrite struct {
	// encode is the answer the handler sends for a progress value of the
	// entity package (see entity/idempotency.go).
	encode func(progress any) (int, []byte)
	// run serves the request on dc and reports whether anything of it
	// committed (then its answer is stored, else the key is released).
	run func(dc context.Context) (committed bool)
	// stream: the body is read as it arrives; its fingerprint is hashed
	// while run reads it (streamBody), and stored when run read it all
	// (*whole), else left unknown (any body then matches).
	stream bool
	whole  *bool
}

// idempotent serves w under the request's Idempotency-Key; a request
// without the header (or a server without the service) runs as it is,
// paying one header lookup.
func (s *Server) idempotent(ctx *fasthttp.RequestCtx, w keyedWrite) {
	raw := ctx.Request.Header.Peek(hdrIdempotencyKey)
	svc := s.deps.Idempotency
	if raw == nil || svc == nil {
		w.run(dctx(ctx))
		return
	}
	key := string(raw)
	if err := idempotency.CheckKey(key); err != nil {
		s.writeError(ctx, err)
		return
	}
	if len(ctx.Request.Header.Peek(hdrTxToken)) > 0 {
		// A joined request's writes commit with its owner's transaction,
		// which has no key of its own to store them with.
		s.writeError(ctx, apierr.New(apierr.BadRequest, "Idempotency-Key cannot be used with X-Tx-Token",
			apierr.P("parameter", hdrIdempotencyKey)))
		return
	}
	req := idempotency.Request{Tenant: PrincipalOf(ctx).TenantID, Key: key}
	method, uri := string(ctx.Method()), string(ctx.RequestURI())
	var h hash.Hash
	if w.stream {
		h = idempotency.NewHash(method, uri)
		req.Later = func() ([]byte, error) {
			// A repeat of a finished stream: read its body to compare.
			if _, err := io.Copy(h, streamBody(ctx)); err != nil {
				return nil, apierr.New(apierr.BadRequest, "reading the request body: "+err.Error())
			}
			return h.Sum(nil), nil
		}
	} else {
		req.Fingerprint = idempotency.Fingerprint(method, uri, ctx.PostBody())
	}
	claim, replay, err := svc.Begin(dctx(ctx), req)
	if err != nil {
		if w.stream {
			ctx.SetConnectionClose() // the body was not read
		}
		s.writeError(ctx, err)
		return
	}
	if replay != nil {
		if w.stream {
			ctx.SetConnectionClose()
		}
		ctx.SetStatusCode(replay.Status)
		if replay.Status >= 400 {
			ctx.SetContentType("application/problem+json")
		} else {
			ctx.SetContentType("application/json")
		}
		ctx.Response.Header.Set(hdrReplayed, "true")
		ctx.SetBody(replay.Body)
		return
	}
	claim.Encode = w.encode
	dc := idempotency.WithClaim(dctx(ctx), claim)
	if w.stream {
		ctx.SetUserValue(streamHashKey{}, h)
	}
	committed := w.run(dc)
	if !committed {
		if err := claim.Release(dc); err != nil {
			s.log.Warn("idempotency: releasing a key", "error", err)
		}
		return
	}
	var fp []byte
	if w.stream && w.whole != nil && *w.whole {
		fp = h.Sum(nil)
	}
	if err := claim.Complete(dc, fp, ctx.Response.StatusCode(), bytes.Clone(ctx.Response.Body())); err != nil {
		// The writes and their answer so far are stored with the key;
		// only a partial failure's final answer is missing.
		s.log.Warn("idempotency: completing a key", "error", err)
	}
}

type streamHashKey struct{}

// streamBody is the request body as a stream, hashed into the request's
// fingerprint when it is keyed.
func streamBody(ctx *fasthttp.RequestCtx) io.Reader {
	var body io.Reader = ctx.RequestBodyStream()
	if ctx.RequestBodyStream() == nil {
		body = bytes.NewReader(ctx.PostBody())
	}
	if h, ok := ctx.UserValue(streamHashKey{}).(hash.Hash); ok {
		return io.TeeReader(body, h)
	}
	return body
}

// encodeResult is the answer of a create for its progress.
func encodeResult(progress any) (int, []byte) {
	switch p := progress.(type) {
	case *entity.Result:
		return fasthttp.StatusOK, appendResult(nil, p)
	case entity.Updated:
		return fasthttp.StatusOK, appendTxResult(nil, p.TxID, p.ID)
	}
	return fasthttp.StatusOK, nil
}
