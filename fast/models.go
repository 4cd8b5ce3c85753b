package fast

import (
	"net/url"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
)

// modelHandlers serves /model/… (except workflow import/export) when a
// model service is configured. Every operation runs in the principal's
// tenant: another tenant's model is absent (404).
func modelHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.Model
	if svc == nil {
		return nil
	}
	// byKey binds {entityName}/{modelVersion} (400 before anything else)
	// and writes the operation's result as JSON.
	byKey := func(op func(ctx *fasthttp.RequestCtx, tenant string, key storage.ModelKey) (any, error)) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			key, err := modelKeyOf(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			out, err := op(ctx, PrincipalOf(ctx).TenantID, key)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			s.writeJSON(ctx, out)
		}
	}
	return map[string]fasthttp.RequestHandler{
		"getAvailableEntityModels": func(ctx *fasthttp.RequestCtx) {
			list, err := svc.List(dctx(ctx), PrincipalOf(ctx).TenantID)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			s.writeJSON(ctx, list)
		},
		"lockEntityModel": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			return svc.Lock(dctx(ctx), t, k)
		}),
		"unlockEntityModel": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			return svc.Unlock(dctx(ctx), t, k)
		}),
		"deleteEntityModel": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			return svc.Delete(dctx(ctx), t, k)
		}),
		"setEntityModelChangeLevel": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			return svc.SetChangeLevel(dctx(ctx), t, k, modelPathParam(ctx, "changeLevel"))
		}),
		"exportMetadata": func(ctx *fasthttp.RequestCtx) {
			key, err := modelKeyOf(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			bp := exportBufs.Get().(*[]byte)
			out, err := svc.AppendExport(dctx(ctx), PrincipalOf(ctx).TenantID, key, modelPathParam(ctx, "converter"), (*bp)[:0])
			if err != nil {
				exportBufs.Put(bp)
				s.writeError(ctx, err)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBody(out)
			if cap(out) <= maxPooledExport {
				*bp = out
				exportBufs.Put(bp)
			}
		},
		"importEntityModel": func(ctx *fasthttp.RequestCtx) {
			key, err := modelKeyOf(ctx)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			id, err := svc.Import(dctx(ctx), PrincipalOf(ctx).TenantID, key,
				modelPathParam(ctx, "dataFormat"), modelPathParam(ctx, "converter"), ctx.PostBody())
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			// The model id as a bare JSON string (docs/decisions/0011-simple-view-export-import.md).
			ctx.SetContentType("application/json")
			var buf [40]byte
			b := append(buf[:0], '"')
			b = append(b, id...)
			ctx.SetBody(append(b, '"'))
		},
		"validateEntityModel": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			return svc.Validate(dctx(ctx), t, k, ctx.PostBody())
		}),
		"setEntityModelUniqueKeys": byKey(func(ctx *fasthttp.RequestCtx, t string, k storage.ModelKey) (any, error) {
			keys, err := decodeUniqueKeys(ctx.PostBody())
			if err != nil {
				return nil, err
			}
			return svc.SetUniqueKeys(dctx(ctx), t, k, keys)
		}),
	}
}

// modelKeyOf binds {entityName}/{modelVersion} with the name unescaped
// (a%20b names "a b", a%2Fb names "a/b"; docs/decisions/0003-http-surface-and-routing.md): the router
// hands parameters over as they appear in the raw path.
func modelKeyOf(ctx *fasthttp.RequestCtx) (storage.ModelKey, error) {
	key, err := modelKeyParam(ctx)
	if err != nil {
		return key, err
	}
	key.Name = modelPathParam(ctx, "entityName")
	return key, nil
}

// modelPathParam is routeParam unescaped; a malformed escape is kept as sent.
func modelPathParam(ctx *fasthttp.RequestCtx, name string) string {
	raw := routeParam(ctx, name)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

// exportBufs recycles export buffers; exports larger than maxPooledExport
// are left to the collector so one huge model does not pin memory.
var exportBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledExport = 1 << 20

// setUniqueKeysRequest is the body of setEntityModelUniqueKeys. Its name
// and field type appear in decode errors clients read ("Go struct field
// setUniqueKeysRequest.uniqueKeys of type []model.UniqueKey").
type setUniqueKeysRequest struct {
	UniqueKeys *[]model.UniqueKey `json:"uniqueKeys"`
}

// decodeUniqueKeys reads a unique-key set body (docs/decisions/0023-unique-keys.md:
// the body is checked before the model is looked up).
func decodeUniqueKeys(body []byte) ([]model.UniqueKey, error) {
	if len(body) > model.MaxUniqueKeysBytes {
		return nil, apierr.Newf(apierr.BadRequest, "invalid request body: larger than %d bytes", model.MaxUniqueKeysBytes)
	}
	var req setUniqueKeysRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, apierr.New(apierr.BadRequest, "invalid request body: "+err.Error())
	}
	if req.UniqueKeys == nil {
		return nil, apierr.New(apierr.BadRequest, "invalid request body: uniqueKeys is required")
	}
	return *req.UniqueKeys, nil
}
