package fast

import (
	"context"
	"testing"
	"time"

	"svc/entity"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
)

// searchEnv is a running server with the model, entity, search and
// message APIs over one engine, reached over loopback.
type searchEnv struct {
	*entityEnv
	search *search.Service
	jobs   storage.SearchJobs
}

func newSearchEnv(t testing.TB, engine string, opt func(*search.Options)) *searchEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var sr storage.Searcher
	var jobs storage.SearchJobs
	var msgs storage.Messages
	if engine == "postgres" {
		db := newEntityPostgres(t)
		ms, es, sr, jobs, msgs = db.Models(), db.Entities(), db.Search(time.Minute), db.SearchJobs(), db.Messages()
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, es, sr, jobs, msgs = db.Models(), db.Entities(), db.Search(), db.SearchJobs(), db.Messages()
	} else {
		me := memory.NewEntities()
		ms, es, sr, jobs, msgs = memory.NewModels(), me, memory.NewSearch(me), memory.NewSearchJobs(), memory.NewMessages()
	}
	msvc := model.New(ms, nil)
	so := search.Options{MaxSortKeys: 3, Workers: 2, Queue: 4, MaxPerTenant: 4, Heartbeat: 50 * time.Millisecond,
		StaleAfter: time.Minute, MaxAttempts: 3, SnapshotTTL: time.Hour, ReapInterval: time.Minute,
		OnBackgroundErr: func(what string, err error) { t.Errorf("%s: %v", what, err) }}
	if opt != nil {
		opt(&so)
	}
	ssvc := search.New(ms, sr, jobs, so)
	ssvc.Start()
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithXML(entity.XMLToJSON), entity.WithGroupMax(50),
		entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Search: ssvc, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the server's cleanup, so it runs after the server
	// has stopped taking requests.
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ssvc.Stop(sctx)
	})
	base, client := serveAPI(t, s)
	env := &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc}
	return &searchEnv{entityEnv: env, search: ssvc, jobs: jobs}
}

func (e *searchEnv) with(t testing.TB) *searchEnv {
	c := *e
	c.entityEnv = e.entityEnv.with(t)
	return &c
}
