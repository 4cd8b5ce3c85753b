package fast

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/apierr"
)

// maxAdminBody caps IAM admin request bodies.
const maxAdminBody = 1 << 20

// decodeAdminBody decodes a JSON body into v. present is false for an
// empty body, which optional bodies treat as absent.
func decodeAdminBody(ctx *fasthttp.RequestCtx, v any) (present bool, err error) {
	b := ctx.PostBody()
	if len(b) == 0 {
		return false, nil
	}
	if len(b) > maxAdminBody {
		return true, apierr.New(apierr.BadRequest, "request body is larger than 1 MiB")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, apierr.New(apierr.BadRequest, "invalid request body")
	}
	return true, nil
}

// writeEmpty is 200 with no body, the answer of delete and invalidate.
func writeEmpty(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusOK) }
