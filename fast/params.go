package fast

import (
	"strconv"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/storage"
)

// routeParam returns a path parameter the router bound (already unescaped).
func routeParam(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}

func badParam(name, value string) error {
	return apierr.New(apierr.BadRequest, "invalid value for parameter '"+name+"'",
		apierr.P("parameter", name), apierr.P("invalidValue", value))
}

// pathInt parses an int32 path parameter.
func pathInt(ctx *fasthttp.RequestCtx, name string) (int, error) {
	raw := routeParam(ctx, name)
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return 0, badParam(name, raw)
	}
	return int(n), nil
}

// modelKeyParam reads {entityName}/{modelVersion}.
func modelKeyParam(ctx *fasthttp.RequestCtx) (storage.ModelKey, error) {
	v, err := pathInt(ctx, "modelVersion")
	if err != nil {
		return storage.ModelKey{}, err
	}
	return storage.ModelKey{Name: routeParam(ctx, "entityName"), Version: v}, nil
}

// writeJSON writes v as the 200 body.
func (s *Server) writeJSON(ctx *fasthttp.RequestCtx, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
