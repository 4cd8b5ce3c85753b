package peer

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serveMux serves m the way the HTTP layer mounts it, on loopback.
func serveMux(t *testing.T, m *Mux) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		h := m.Routes()[path]
		if h == nil {
			ctx.SetStatusCode(404)
			return
		}
		body := ctx.Request.Body()
		plain, ts, err := m.Guard().Open("POST", path, ctx.Request.Header.ContentType(), ctx.Request.Header.Peek(HeaderTimestamp), body)
		if err != nil {
			ctx.SetStatusCode(403)
			return
		}
		out, err := h(ctx, plain)
		if err != nil {
			ctx.SetStatusCode(500)
			return
		}
		ctx.SetBody(m.Guard().Key().SealResponse("POST", path, ts, Nonce(body), out))
	}}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return "http://" + ln.Addr().String()
}

// TestClientRoundTrip: a call reaches the handler and its answer comes
// back opened; a node with another secret refuses it (ErrUnreachable); a
// peer that does not answer within the timeout is ErrUnreachable too.
func TestClientRoundTrip(t *testing.T) {
	k := testKey(t, 1)
	m := NewMux(NewGuard(k))
	m.Handle("/internal/echo", func(_ context.Context, b []byte) ([]byte, error) { return append([]byte("echo:"), b...), nil })
	base := serveMux(t, m)
	c := NewClient(k, ClientOptions{Timeout: 10 * time.Second, AllowLoopback: true})
	out, err := c.Call(context.Background(), base, "/internal/echo", []byte("hi"))
	if err != nil || string(out) != "echo:hi" {
		t.Fatalf("%q %v", out, err)
	}
	other := NewClient(testKey(t, 2), ClientOptions{Timeout: 10 * time.Second, AllowLoopback: true})
	if _, err := other.Call(context.Background(), base, "/internal/echo", []byte("hi")); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("another secret: %v", err)
	}
	noLoop := NewClient(k, ClientOptions{Timeout: 10 * time.Second})
	if _, err := noLoop.Call(context.Background(), base, "/internal/echo", []byte("hi")); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("loopback peer without AllowLoopback: %v", err)
	}

	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 8)
	go func() {
		for {
			cn, err := hang.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- cn
		}
	}()
	t.Cleanup(func() {
		hang.Close()
		for cn := range conns {
			cn.Close()
		}
	})
	short := NewClient(k, ClientOptions{Timeout: 200 * time.Millisecond, AllowLoopback: true})
	if _, err := short.Call(context.Background(), "http://"+hang.Addr().String(), "/internal/echo", []byte("hi")); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("silent peer: %v", err)
	}
}
