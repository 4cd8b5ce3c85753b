package fast

import (
	"testing"

	"github.com/valyala/fasthttp"

	"svc/platform/jsondoc"
)

// FuzzRequestTextFault drives the request guard with arbitrary path
// parameter, query and body bytes: it never panics, refuses whenever a
// parameter is not text, passes a JSON body exactly when jsondoc accepts
// it (or it is not JSON at all), and every refusal is a 400 BAD_REQUEST.
// Seeds (testdata/fuzz/FuzzRequestTextFault) hold NUL, an encoded lone
// surrogate, 0xff and a duplicate key.
func FuzzRequestTextFault(f *testing.F) {
	f.Add("orders", "pageSize=5", []byte(`{"a":1}`))
	f.Add("a\x00b", "", []byte(``))
	f.Add("%00", "", []byte(``))
	f.Add("orders", "eventType=%00", []byte(``))
	f.Add("orders", "q=%ED%A0%80", []byte(``))
	f.Add("\xff", "", []byte(``))
	f.Add("orders", "", []byte(`{"a":1,"a":2}`))
	f.Add("orders", "", []byte(`{"a":"\ud800"}`))
	f.Add("orders", "", []byte("{\"a\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, param, query string, body []byte) {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil)
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/api/x?" + query)
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBody(body)
		ctx.SetUserValue("entityName", param)
		err := requestTextFault(&ctx, []string{"entityName"}, true)
		if err != nil && err.Code.String() != "BAD_REQUEST" {
			t.Fatalf("code %s", err.Code)
		}
		if !jsondoc.ValidText(param) && err == nil {
			t.Fatalf("parameter %q passed", param)
		}
		bodyOK := true
		if e, ok := jsondoc.Check(body).(*jsondoc.Error); ok && e.Kind != jsondoc.Syntax {
			bodyOK = false
		}
		if !bodyOK && err == nil {
			t.Fatalf("body %q passed", body)
		}
	})
}
