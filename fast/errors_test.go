package fast

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/storage"
)

func TestWriteErrorMapsCodesAndProps(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	cases := []struct {
		err       error
		status    int
		code      string
		retryable any
		props     map[string]any
	}{
		{apierr.New(apierr.ModelNotFound, "cannot find model entityName=a, version=1", apierr.P("entityName", "a"), apierr.P("entityVersion", 1)),
			404, "MODEL_NOT_FOUND", false, map[string]any{"entityName": "a", "entityVersion": float64(1)}},
		{apierr.New(apierr.BadRequest, "bad converter", apierr.P("parameter", "converter"), apierr.P("invalidValue", "X"), apierr.P("validValues", []string{"A", "B"})),
			400, "BAD_REQUEST", false, map[string]any{"parameter": "converter", "invalidValue": "X", "validValues": []any{"A", "B"}}},
		{fmt.Errorf("put: %w", storage.ErrConflict), 409, "CONFLICT", true, nil},
		{fmt.Errorf("get: %w", storage.ErrUnavailable), 503, "SERVICE_UNAVAILABLE", true, nil},
		{errors.New("disk on fire"), 500, "SERVER_ERROR", nil, nil},
	}
	for _, c := range cases {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/api/x")
		s.writeError(&ctx, c.err)
		if ctx.Response.StatusCode() != c.status {
			t.Errorf("%v: status %d, want %d", c.err, ctx.Response.StatusCode(), c.status)
			continue
		}
		m := decode(t, ctx.Response.Body())
		props := m["properties"].(map[string]any)
		if props["errorCode"] != c.code || props["retryable"] != c.retryable {
			t.Errorf("%v: properties %v", c.err, props)
		}
		for k, v := range c.props {
			if fmt.Sprint(props[k]) != fmt.Sprint(v) {
				t.Errorf("%v: %s = %v, want %v", c.err, k, props[k], v)
			}
		}
		if c.status == 500 && strings.Contains(m["detail"].(string), "fire") {
			t.Error("sanitized 500 leaks the cause")
		}
	}
}
