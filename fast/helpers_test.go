package fast

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// serveAPI serves s on loopback until the test ends and returns the API
// base URL (with the context path) and a client for it.
func serveAPI(t testing.TB, s *Server) (base string, client *http.Client) {
	t.Helper()
	root, stop := serveLoopback(t, s)
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		stop()
	})
	return root + s.cfg.ContextPath, &http.Client{Transport: tr, Timeout: 60 * time.Second}
}
