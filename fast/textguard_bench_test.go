package fast

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkRequestTextFault: the text guard on an entity get, GET
// {ctx}/entity/{entityId} without a query or body, as the router hands
// it over (the id in the path and as the route parameter).
func BenchmarkRequestTextFault(b *testing.B) {
	const id = "d7982640-ea42-11f1-ba6f-ba823650d359"
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, nil, nil)
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.SetRequestURI("/api/entity/" + id)
	ctx.SetUserValue("entityId", id)
	params := pathParams("/entity/{entityId}")
	b.ReportAllocs()
	for b.Loop() {
		if err := requestTextFault(&ctx, params, true); err != nil {
			b.Fatal(err)
		}
	}
}
