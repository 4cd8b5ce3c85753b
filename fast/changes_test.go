package fast

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/changefeed"
	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/modelcache"
	"svc/storage/sqlite/sqlitetest"
	"svc/workflow"
)

// feedAuth: "Bearer <tenant>" is an M2M client of tenant; "Bearer
// <tenant>:user" a user without roles.
type feedAuth struct{}

func (feedAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	t, ok := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
	if !ok || t == "" {
		return nil, fmt.Errorf("no bearer")
	}
	if tenant, plain := strings.CutSuffix(t, ":user"); plain {
		return &iam.Principal{Kind: "user", UserID: "u", TenantID: tenant}, nil
	}
	return &iam.Principal{Kind: "service", UserID: "c-" + t, TenantID: t, Roles: []string{iam.RoleM2M}}, nil
}

type feedEnv struct {
	*entityEnv
	hub *changefeed.Hub
	srv *Server
}

// newFeedEnv serves the entity, model and change-feed APIs over one
// engine, wired as cmd/svc wires them: the entity service writes through
// the Recorder, whose commits wake the hub.
func newFeedEnv(t testing.TB, engine string) *feedEnv {
	t.Helper()
	return newFeedEnvRecording(t, engine, true, false)
}

// newFeedEnvRecording is newFeedEnv; with record false the entity service
// writes to the engine directly (no Recorder), as a baseline; with cache
// the services read models through the cache cmd/svc puts in front of a
// database (benchmarks: the request's own cost, not a model query).
func newFeedEnvRecording(t testing.TB, engine string, record, cache bool) *feedEnv {
	t.Helper()
	var ms storage.Models
	var ents storage.Entities
	var log storage.ChangeLog
	var subs storage.Subscriptions
	switch engine {
	case "postgres":
		db := newEntityPostgres(t)
		ms, ents, log, subs = db.Models(), db.Entities(), db.Changes(), db.Subscriptions()
	case "sqlite":
		db := sqlitetest.Open(t)
		ms, ents, log, subs = db.Models(), db.Entities(), db.Changes(), db.Subscriptions()
	default:
		m := memory.NewEntities()
		ms, ents, log, subs = memory.NewModels(), m, m.Changes(), memory.NewSubscriptions()
	}
	if cache && engine != "memory" {
		ms = modelcache.New(ms, 5*time.Minute)
	}
	w := &changefeed.Watched{}
	feed := changefeed.New(subs, log, w, changefeed.Options{})
	hub := changefeed.NewHub(feed, changefeed.HubOptions{Poll: time.Hour})
	rec := changefeed.NewRecorder(ents, w, hub.Notify)
	hub.Start()
	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
	var write storage.Entities = rec
	if !record {
		write = ents
	}
	esvc := entity.New(write, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: feedAuth{}, Model: msvc, Models: ms, Entities: esvc, Changes: feed, ChangeHub: hub})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	// The hub stops before the server: its streams end with their final
	// event and the server's shutdown does not wait on them.
	t.Cleanup(hub.Stop)
	return &feedEnv{entityEnv: &entityEnv{t: t, base: base, client: client, ents: rec, models: ms, svc: esvc}, hub: hub, srv: s}
}

type sseEvent struct {
	id, event, data string
}

// sseStream reads a text/event-stream over a plain HTTP client.
type sseStream struct {
	t      testing.TB
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

func (e *feedEnv) open(tenant, path string, hdr ...string) *sseStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	// No client timeout: a stream lives until cancelled.
	resp, err := (&http.Client{Transport: e.client.Transport}).Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		e.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{t: e.t, resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	attached := make(chan struct{})
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var cur sseEvent
		first := true
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.data != "" {
					s.events <- cur
				}
				cur = sseEvent{}
			case strings.HasPrefix(line, ":"):
				// The first comment says the server attached the stream.
				if first {
					first = false
					close(attached)
				}
			case strings.HasPrefix(line, "id: "):
				cur.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				cur.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				cur.data = line[6:]
			}
		}
	}()
	select {
	case <-attached:
	case <-time.After(60 * time.Second):
		e.t.Fatal("stream never started")
	}
	e.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("stream ended")
		}
		return ev
	case <-time.After(60 * time.Second):
		s.t.Fatal("no event within 60s")
	}
	panic("unreachable")
}

func (s *sseStream) change() changefeed.Event {
	s.t.Helper()
	ev := s.next()
	if ev.event != "change" {
		s.t.Fatalf("event %q: %s", ev.event, ev.data)
	}
	var c changefeed.Event
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
		s.t.Fatal(err)
	}
	if c.Cursor != ev.id {
		s.t.Fatalf("id %q, cursor %q", ev.id, c.Cursor)
	}
	return c
}

// TestChangeFeedOverSSE: on memory, SQLite and PostgreSQL, over loopback with a plain
// HTTP client: a durable subscription streams the API's writes, resumes
// after Last-Event-ID and acknowledges up to it (lag on the resource);
// the live stream /changes sees its filter's changes only; tenants and
// roles are enforced; management errors name what is wrong.
func TestChangeFeedOverSSE(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newFeedEnv(t, engine)
			e.lockedModel("t1", "order", 1, `{"total": 1, "customer": "c"}`)
			e.lockedModel("t1", "invoice", 1, `{"total": 1}`)

			// Management.
			var sub changefeed.Subscription
			r := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1},"includeBody":"AFTER"}`))
			if r.status != 201 {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			r.decode(t, &sub)
			if sub.ID == "" || sub.Cursor == "" || sub.Delivery != "DURABLE" {
				t.Fatalf("created %+v", sub)
			}
			if r := e.call("t1:user", "GET", "/subscriptions", nil); r.status != 403 {
				t.Fatalf("no role: %d", r.status)
			}
			if r := e.call("t2", "GET", "/subscriptions/"+sub.ID, nil); r.status != 404 {
				t.Fatalf("other tenant: %d", r.status)
			}
			bad := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1,
				"bodyPredicate":{"type":"group","operator":"AND","conditions":[{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"A"}]}}}`))
			if bad.status != 400 || !strings.Contains(string(bad.body), "filter.bodyPredicate.conditions[0]") {
				t.Fatalf("lifecycle condition: %d %s", bad.status, bad.body)
			}
			if r := e.call("t1", "PATCH", "/subscriptions/"+sub.ID, []byte(`{"delivery":"LIVE_ONLY"}`)); r.status != 400 {
				t.Fatalf("patch delivery: %d %s", r.status, r.body)
			}

			// Durable stream: three creates arrive, with bodies.
			s := e.open("t1", "/subscriptions/"+sub.ID+"/events")
			var ids, txs []string
			for i := 0; i < 3; i++ {
				id, tx := e.create("t1", "order", 1, fmt.Sprintf(`{"total": %d, "customer": "c"}`, i))
				ids, txs = append(ids, id), append(txs, tx)
			}
			e.create("t1", "invoice", 1, `{"total": 5}`) // another model: not this subscription's
			var got []changefeed.Event
			for i := 0; i < 3; i++ {
				ev := s.change()
				if ev.EventID != txs[i]+":"+ids[i] || ev.Kind != "CREATE" || ev.ModelName != "order" || ev.ToState == "" ||
					!strings.Contains(string(ev.BodyAfter), fmt.Sprintf(`"total":%d`, i)) {
					t.Fatalf("event %d: %+v", i, ev)
				}
				got = append(got, ev)
			}
			s.close()
			var res changefeed.Subscription
			e.call("t1", "GET", "/subscriptions/"+sub.ID, nil).ok(t).decode(t, &res)
			if res.Lag == nil || res.Lag.Events != 3 {
				t.Fatalf("before any ack: lag %+v", res.Lag)
			}
			// The same lag on /metrics.
			m := string(adminGet(e.srv, "/metrics").Body())
			if !strings.Contains(m, "\nchangefeed_subscriptions 1\n") || !strings.Contains(m, "\nchangefeed_unacknowledged_events 3\n") ||
				!strings.Contains(m, "# HELP changefeed_oldest_unacknowledged_age_seconds ") {
				t.Fatalf("/metrics: %s", m)
			}
			// Reconnect as EventSource does: resume after the second.
			s = e.open("t1", "/subscriptions/"+sub.ID+"/events", "Last-Event-ID", got[1].Cursor)
			if ev := s.change(); ev.EventID != got[2].EventID {
				t.Fatalf("resumed at %+v, want the third", ev)
			}
			e.call("t1", "GET", "/subscriptions/"+sub.ID, nil).ok(t).decode(t, &res)
			if res.Lag.Events != 1 || res.Cursor != got[1].Cursor {
				t.Fatalf("after resuming: cursor %s lag %+v", res.Cursor, res.Lag)
			}
			s.close()

			// Live stream: from now, its filter only.
			live := e.open("t1", "/changes?modelName=invoice&modelVersion=1&kinds=CREATE&includeBody=AFTER")
			e.create("t1", "order", 1, `{"total": 9, "customer": "c"}`)
			id, tx := e.create("t1", "invoice", 1, `{"total": 7}`)
			if ev := live.change(); ev.EventID != tx+":"+id || ev.ModelName != "invoice" || !strings.Contains(string(ev.BodyAfter), `"total":7`) {
				t.Fatalf("live event %+v", ev)
			}
			if r := e.call("t1", "GET", "/changes?modelName=invoice", nil); r.status != 400 {
				t.Fatalf("live stream without version: %d", r.status)
			}

			// Delete; the list is empty again.
			if r := e.call("t1", "DELETE", "/subscriptions/"+sub.ID, nil); r.status != 204 {
				t.Fatalf("delete: %d", r.status)
			}
			var page struct {
				Subscriptions []changefeed.Subscription `json:"subscriptions"`
			}
			e.call("t1", "GET", "/subscriptions", nil).ok(t).decode(t, &page)
			if len(page.Subscriptions) != 0 {
				t.Fatalf("after delete: %+v", page)
			}

			// Shutdown cuts the live stream with a final event.
			e.hub.Stop()
			if ev := live.next(); ev.event != "cut" || !strings.Contains(ev.data, "SHUTDOWN") {
				t.Fatalf("final event %+v", ev)
			}
		})
	}
}
