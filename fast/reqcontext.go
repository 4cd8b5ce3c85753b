package fast

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// requestContext is the context.Context the domain gets for one request:
// the RequestCtx itself, seen through a type whose Done is nil.
//
// A *fasthttp.RequestCtx is recycled when its handler returns, but
// context.WithTimeout, context.AfterFunc and pgx's cancellation watcher
// start goroutines that call the parent's Done after that whenever the
// parent's Done is not nil; on a bare RequestCtx those late calls read
// fields the next request is writing (a data race the race detector
// reports under load). Its Done only ever closes at server shutdown, and a
// shutdown drains in-flight requests rather than cancelling them, so a
// never-cancelled context loses nothing and starts no goroutine. The
// conversion is free: no allocation per request.
type requestContext fasthttp.RequestCtx

// dctx returns the request's domain context.
func dctx(rc *fasthttp.RequestCtx) context.Context { return (*requestContext)(rc) }

func (c *requestContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *requestContext) Done() <-chan struct{} { return nil }

func (c *requestContext) Err() error { return nil }

// Value reads the request's user values; domain code calls it only while
// the request is being served.
func (c *requestContext) Value(key any) any { return (*fasthttp.RequestCtx)(c).UserValue(key) }
