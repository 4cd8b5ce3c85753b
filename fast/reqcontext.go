package fast

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// requestContext is the context.Context the domain gets for one request.
//
// A *fasthttp.RequestCtx is recycled when its handler returns, but
// context.WithTimeout, context.AfterFunc and pgx's cancellation watcher
// start goroutines that call the parent's Done after that: on a bare
// RequestCtx those calls read fields the next request is writing (a data
// race the race detector reports under load). This wrapper captures the
// Done channel (the server's shutdown channel) while the request is live,
// so late callers never touch the recycled RequestCtx for it.
type requestContext struct {
	rc   *fasthttp.RequestCtx
	done <-chan struct{}
}

type reqContextKey struct{}

// dctx returns the request's domain context, made once per request.
func dctx(rc *fasthttp.RequestCtx) context.Context {
	if c, ok := rc.UserValue(reqContextKey{}).(*requestContext); ok {
		return c
	}
	c := &requestContext{rc: rc, done: rc.Done()}
	rc.SetUserValue(reqContextKey{}, c)
	return c
}

func (c *requestContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *requestContext) Done() <-chan struct{} { return c.done }

func (c *requestContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// Value reads the request's user values; domain code calls it only while
// the request is being served.
func (c *requestContext) Value(key any) any {
	if _, ok := key.(reqContextKey); ok {
		return nil
	}
	return c.rc.UserValue(key)
}
