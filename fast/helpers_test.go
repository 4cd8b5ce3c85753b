package fast

import (
	"context"
	"net/http"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
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

// testStores opens the model, entity, audit and search stores of one
// engine ("postgres": a fresh database for the test; anything else:
// memory).
func testStores(t testing.TB, engine string) (storage.Models, storage.Entities, storage.Audits, storage.Searcher) {
	t.Helper()
	if engine == "postgres" {
		db := newEntityPostgres(t)
		return db.Models(), db.Entities(), db.Audits(), db.Search(time.Minute)
	}
	if engine == "sqlite" {
		db := sqlitetest.Open(t)
		return db.Models(), db.Entities(), db.Audits(), db.Search()
	}
	m := memory.NewEntities()
	return memory.NewModels(), m, m.Audits(), memory.NewSearch(m)
}
