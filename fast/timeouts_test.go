package fast

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"svc/platform/config"
)

func TestHTTPTimeoutFallbacks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                              string
		idle, header, read, write         time.Duration
		wantIdle, wantHeader, wantBodyCfg time.Duration
		wantWrite                         time.Duration
	}{
		{"defaults", 2 * time.Minute, 10 * time.Second, 5 * time.Minute, 0, 2 * time.Minute, 10 * time.Second, 5 * time.Minute, 0},
		{"header 0 falls back to read", time.Minute, 0, 30 * time.Second, 0, time.Minute, 30 * time.Second, 0, 0},
		{"idle 0 falls back to read", 0, time.Second, 30 * time.Second, 0, 30 * time.Second, time.Second, 30 * time.Second, 0},
		{"write set", time.Minute, time.Second, time.Minute, 7 * time.Second, time.Minute, time.Second, time.Minute, 7 * time.Second},
		{"read 0 disables the body budget", time.Minute, time.Second, 0, 0, time.Minute, time.Second, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestServer(t, func(cfg *config.Config) {
				cfg.HTTPIdleTimeout, cfg.HTTPReadHeaderTimeout, cfg.HTTPReadTimeout, cfg.HTTPWriteTimeout = c.idle, c.header, c.read, c.write
			})
			srv := s.httpServer(s.handler, "api")
			if srv.IdleTimeout != c.wantIdle || srv.ReadTimeout != c.wantHeader || srv.WriteTimeout != c.wantWrite {
				t.Errorf("idle %s header %s write %s", srv.IdleTimeout, srv.ReadTimeout, srv.WriteTimeout)
			}
			var body time.Duration
			if srv.HeaderReceived != nil {
				body = srv.HeaderReceived(&fasthttp.RequestHeader{}).ReadTimeout
			}
			if body != c.wantBodyCfg {
				t.Errorf("body read budget %s, want %s", body, c.wantBodyCfg)
			}
		})
	}
}

// TestReadHeaderTimeoutClosesSlowClient sends half a request line and
// expects the server to give up on it.
func TestReadHeaderTimeoutClosesSlowClient(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, func(c *config.Config) { c.HTTPReadHeaderTimeout = 300 * time.Millisecond })
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()
	defer func() { cancel(); <-done }()

	conn, err := net.Dial("tcp", apiLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET /api/help HTTP/1.1\r\nHo"))
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	start := time.Now()
	line, err := bufio.NewReader(conn).ReadString('\n')
	elapsed := time.Since(start)
	// fasthttp answers a timed-out partial header with 400 or 408 and
	// closes; either way the connection must not stay parked.
	if err == nil && !strings.HasPrefix(line, "HTTP/1.1 408") && !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Fatalf("slow client got %q", line)
	}
	if elapsed > 30*time.Second { // generous: loaded machine; the idle default is 2m
		t.Fatalf("server held a stalled header for %s", elapsed)
	}
}
