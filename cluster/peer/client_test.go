package peer

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
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
		if errors.Is(err, ErrMalformed) {
			ctx.SetStatusCode(400)
			ctx.SetContentType(ContentType)
			prob, _ := json.Marshal(map[string]any{"status": 400, "detail": "BAD_REQUEST: " + err.Error()})
			ctx.SetBody(m.Guard().Key().SealResponse("POST", path, ts, Nonce(body), prob))
			return
		}
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

// TestClientMalformedRefusal: a peer's sealed 400 (the route could not
// read the payload) comes back as ErrMalformed with the peer's detail, not
// as ErrUnreachable; an unsealed 400, which anyone on the path could
// send, stays ErrUnreachable.
func TestClientMalformedRefusal(t *testing.T) {
	k := testKey(t, 1)
	m := NewMux(NewGuard(k))
	m.Handle("/internal/strict", func(_ context.Context, b []byte) ([]byte, error) {
		return nil, Malformed("want %q, got %q", "ok", b)
	})
	base := serveMux(t, m)
	c := NewClient(k, ClientOptions{Timeout: 10 * time.Second, AllowLoopback: true})
	_, err := c.Call(context.Background(), base, "/internal/strict", []byte("nope"))
	if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), `want "ok", got "nope"`) {
		t.Fatalf("sealed 400: %v, want ErrMalformed with the peer's detail", err)
	}

	plain400 := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(400)
		ctx.SetContentType(ContentType)
		ctx.SetBodyString("not sealed")
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = plain400.Serve(ln) }()
	t.Cleanup(func() { _ = plain400.Shutdown(); <-done })
	if _, err := c.Call(context.Background(), "http://"+ln.Addr().String(), "/internal/strict", []byte("x")); !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrMalformed) {
		t.Fatalf("unsealed 400: %v, want ErrUnreachable", err)
	}
}
