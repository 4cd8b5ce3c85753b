package fast

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
)

// fedMaxBody caps IAM admin request bodies.
const fedMaxBody = 1 << 20

// fedDecodeBody decodes a JSON body into v. present is false for an
// empty body, which optional bodies treat as absent.
func fedDecodeBody(ctx *fasthttp.RequestCtx, v any) (present bool, err error) {
	b := ctx.PostBody()
	if len(b) == 0 {
		return false, nil
	}
	if len(b) > fedMaxBody {
		return true, apierr.New(apierr.BadRequest, "request body is larger than 1 MiB")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, apierr.New(apierr.BadRequest, "invalid request body")
	}
	return true, nil
}

// fedWriteEmpty is 200 with no body, the answer of delete and invalidate.
func fedWriteEmpty(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusOK) }
