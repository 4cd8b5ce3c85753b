package fast

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/config"
)

// liveServer serves s on loopback listeners until the test ends and returns
// the API address.
func liveServer(t *testing.T, s *Server) string {
	t.Helper()
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return apiLn.Addr().String()
}

// rawExchange writes req on a fresh connection and reads one response.
func rawExchange(t *testing.T, addr, req string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to %.40q: %v", req, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func wantProblem(t *testing.T, what string, resp *http.Response, status int) map[string]any {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%s: %d %s %q", what, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["status"] != float64(status) {
		t.Fatalf("%s: body %s (%v)", what, b, err)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("%s: no X-Request-ID", what)
	}
	return m
}

// TestMalformedRequestsGetProblemJSON speaks raw HTTP to a live listener:
// whatever fasthttp cannot read is answered in the problem+json envelope,
// never with its plain-text pages.
func TestMalformedRequestsGetProblemJSON(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, func(c *config.Config) { c.HTTPMaxBodyBytes = 1024 })
	addr := liveServer(t, s)

	wantProblem(t, "garbage request line", rawExchange(t, addr, "THIS IS NOT HTTP\r\n\r\n"), 400)
	wantProblem(t, "bad version", rawExchange(t, addr, "GET /api/help HTTP/9\r\nHost: x\r\n\r\n"), 400)
	wantProblem(t, "header without colon", rawExchange(t, addr, "GET /api/help HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"), 400)
	big := strings.Repeat("a", MaxHeaderBytes+1024)
	wantProblem(t, "oversized header", rawExchange(t, addr, "GET /api/help HTTP/1.1\r\nHost: x\r\nX-Big: "+big+"\r\n\r\n"), 431)
	// Bodies are streamed (the NDJSON create reads one of any length), so
	// the server reads the first bytes of a body before refusing it by its
	// Content-Length: the client sends its body, as clients do.
	m := wantProblem(t, "body over the limit", rawExchange(t, addr,
		"POST /api/model/validate/x/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2048\r\n\r\n"+strings.Repeat(" ", 2048)), 413)
	if props, _ := m["properties"].(map[string]any); props["errorCode"] != "BAD_REQUEST" || props["maxBodyBytes"] != float64(1024) {
		t.Fatalf("413 properties %v", m["properties"])
	}
	chunk := strings.Repeat("b", 1500)
	wantProblem(t, "chunked body over the limit", rawExchange(t, addr, fmt.Sprintf(
		"POST /api/model/validate/x/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk)), 413)
	wantProblem(t, "broken chunks", rawExchange(t, addr,
		"POST /api/model/validate/x/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), 400)

	// Under the limit the request reaches its handler.
	resp := rawExchange(t, addr, "GET /api/help/cli HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("well-formed request: %d", resp.StatusCode)
	}
}

// TestRequestIDInProblemLogAndAccessLog: the id in the response header is
// the one in the problem's log line and in the access line, in JSON logs.
func TestRequestIDInProblemLogAndAccessLog(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	cfg := config.Defaults()
	cfg.AccessLog = true
	cfg.LogLevel = "debug"
	s, err := New(cfg, Deps{Log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	r := do(s, "GET", "/api/help/no-such-topic", "X-Request-ID", "trace-123")
	if r.StatusCode() != 404 || string(r.Header.Peek("X-Request-ID")) != "trace-123" {
		t.Fatalf("%d id %q", r.StatusCode(), r.Header.Peek("X-Request-ID"))
	}
	r = do(s, "GET", "/api/entity/stats")
	minted := string(r.Header.Peek("X-Request-ID"))
	var refused, access []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		switch m["msg"] {
		case "request refused":
			refused = append(refused, m)
		case "request":
			access = append(access, m)
		}
	}
	if len(refused) != 1 || refused[0]["request_id"] != "trace-123" || refused[0]["code"] != "HELP_TOPIC_NOT_FOUND" {
		t.Fatalf("problem log lines %v", refused)
	}
	if len(access) != 2 {
		t.Fatalf("access lines %v", access)
	}
	a := access[0]
	if a["method"] != "GET" || a["path"] != "/api/help/no-such-topic" || a["status"] != float64(404) ||
		a["request_id"] != "trace-123" || a["bytes"].(float64) <= 0 || a["duration_ms"] == nil {
		t.Fatalf("access line %v", a)
	}
	if b := access[1]; b["request_id"] != minted || minted == "" || b["tenant"] == "" || b["tenant"] == nil {
		t.Fatalf("second access line %v (minted %q)", b, minted)
	}
}

// syncBuffer is a bytes.Buffer a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}
