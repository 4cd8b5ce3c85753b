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

// instantRangeDoc ends the description of every instant parameter.
const instantRangeDoc = " An instant outside " + storage.InstantRangeText + " (the range svc stores) is 400 naming the parameter."

// positionDoc describes stream-data row positions.
const positionDoc = "Row position, 0 to 2^53-1 (the largest integer every JSON client carries exactly); anything else is 400 naming the field."

// badInstant is 400 for an instant parameter that does not parse or lies
// outside the range the engines store (storage.InstantInRange).
func badInstant(name, value string) error {
	return apierr.New(apierr.BadRequest, "invalid value for parameter '"+name+"': an RFC 3339 instant "+storage.InstantRangeText+" is expected",
		apierr.P("parameter", name), apierr.P("invalidValue", value))
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
