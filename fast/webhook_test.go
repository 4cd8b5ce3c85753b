package fast

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/changefeed"
	"svc/entity"
	"svc/internal/await"
	"svc/model"
	"svc/platform/config"
	"svc/platform/netguard"
	"svc/platform/netguard/netguardtest"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
	"svc/workflow"
)

// newHookEnv is newFeedEnv with the webhook door: the deliverer runs
// over the same service and hub, with wo as its options.
func newHookEnv(t *testing.T, engine string, wo changefeed.WebhookOptions) *feedEnv {
	t.Helper()
	var ms storage.Models
	var ents storage.Entities
	var log storage.ChangeLog
	var subs storage.Subscriptions
	switch engine {
	case "postgres":
		db := newEntityPostgres(t)
		ms, ents, log, subs, wo.Store = db.Models(), db.Entities(), db.Changes(), db.Subscriptions(), db.Webhooks()
	case "sqlite":
		db := sqlitetest.Open(t)
		ms, ents, log, subs, wo.Store = db.Models(), db.Entities(), db.Changes(), db.Subscriptions(), db.Webhooks()
	default:
		m := memory.NewEntities()
		ms, ents, log, subs, wo.Store = memory.NewModels(), m, m.Changes(), memory.NewSubscriptions(), memory.NewWebhooks()
	}
	w := &changefeed.Watched{}
	feed := changefeed.New(subs, log, w, changefeed.Options{Webhook: wo})
	hub := changefeed.NewHub(feed, changefeed.HubOptions{Poll: time.Hour})
	rec := changefeed.NewRecorder(ents, w, hub.Notify)
	hub.Start()
	hooks := changefeed.NewDeliverer(feed, hub)
	hooks.Start()
	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
	esvc := entity.New(rec, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)))
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
	t.Cleanup(hub.Stop)
	t.Cleanup(hooks.Stop)
	return &feedEnv{entityEnv: &entityEnv{t: t, base: base, client: client, ents: rec, models: ms, svc: esvc}, hub: hub, srv: s}
}

// receiver is a webhook receiver over real TLS that checks every request
// as a Standard Webhooks consumer does, with its own verification code.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	secret  string
	answer  func(r *http.Request) (int, http.Header, string) // nil: 204
	events  []changefeed.Event
	ids     []string // webhook-id of every request, in arrival order
	bad     []string // requests that failed verification
	answers []int
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

// verify checks a request the way the Standard Webhooks specification
// tells a receiver to: the HMAC-SHA256 of "{id}.{timestamp}.{body}" under
// the base64-decoded secret after "whsec_", one of the space-separated
// "v1,<base64>" signatures, a fresh timestamp.
func verify(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return fmt.Errorf("secret %q is not whsec_<base64>", secret)
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("missing headers: id %q timestamp %q signature %q", id, ts, sigs)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %s off", ts, d)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no signature in %q verifies", sigs)
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.ids = append(rc.ids, r.Header.Get("webhook-id"))
	if err := verify(rc.secret, r.Header, body, time.Now()); err != nil {
		rc.bad = append(rc.bad, err.Error())
		w.WriteHeader(401)
		return
	}
	status, hdr, text := 204, http.Header(nil), ""
	if rc.answer != nil {
		status, hdr, text = rc.answer(r)
	}
	rc.answers = append(rc.answers, status)
	for k, v := range hdr {
		w.Header()[k] = v
	}
	if status/100 == 2 {
		var msg struct {
			Type string `json:"type"`
			Data struct {
				SubscriptionID string             `json:"subscriptionId"`
				Events         []changefeed.Event `json:"events"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &msg); err != nil || msg.Type != "entity.changes" {
			rc.bad = append(rc.bad, fmt.Sprintf("payload %s: %v", body, err))
		}
		rc.events = append(rc.events, msg.Data.Events...)
	}
	w.WriteHeader(status)
	io.WriteString(w, text)
}

func (rc *receiver) set(answer func(r *http.Request) (int, http.Header, string)) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

// distinct are the events received, deduplicated by eventId (a consumer
// does that: delivery is at least once), in arrival order.
func (rc *receiver) distinct() []changefeed.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	seen := map[string]bool{}
	var out []changefeed.Event
	for _, ev := range rc.events {
		if !seen[ev.EventID] {
			seen[ev.EventID] = true
			out = append(out, ev)
		}
	}
	return out
}

// waits records the retry waits the deliverer asked for and lets each
// pass after a few milliseconds: no test waits out a backoff.
type waits struct {
	mu sync.Mutex
	ds []time.Duration
}

func (w *waits) after(d time.Duration) <-chan time.Time {
	w.mu.Lock()
	w.ds = append(w.ds, d)
	w.mu.Unlock()
	return time.After(5 * time.Millisecond)
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.ds...)
}

type hookSub struct {
	ID      string `json:"id"`
	Cursor  string `json:"cursor"`
	Webhook *struct {
		URL    string                    `json:"url"`
		Secret string                    `json:"secret"`
		Status *changefeed.WebhookStatus `json:"status"`
	} `json:"webhook"`
	Lag *changefeed.Lag `json:"lag"`
}

func (e *feedEnv) hookSub(tenant, id string) (hookSub, []byte) {
	e.t.Helper()
	r := e.call(tenant, "GET", "/subscriptions/"+id, nil).ok(e.t)
	var s hookSub
	r.decode(e.t, &s)
	return s, r.body
}

// TestWebhookDelivery: on memory, SQLite and PostgreSQL, a subscription
// naming an HTTPS receiver (a real TLS server) gets its events POSTed in
// signed batches: the receiver verifies every signature with the secret
// shown once at create (GET and list never show it again), gets every
// event at least once and in commit order per entity, is retried after a
// 503's Retry-After with the same webhook-id, and, failing on, is marked
// failing with its last error on the resource until it answers again.
func TestWebhookDelivery(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			rc := newReceiver(t)
			ws := &waits{}
			e := newHookEnv(t, engine, changefeed.WebhookOptions{
				Net: netguardOptions(rc), MaxEvents: 2, FailingAfter: 3, After: ws.after, Rescan: time.Hour,
				BackoffMin: time.Second, BackoffMax: 8 * time.Second,
			})
			e.lockedModel("t1", "order", 1, `{"total": 1, "customer": "c"}`)

			r := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1},"includeBody":"AFTER",
				"webhook":{"url":"`+rc.srv.URL+`/hook?x=1"}}`))
			if r.status != 201 {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			var created hookSub
			r.decode(t, &created)
			if created.Webhook == nil || !strings.HasPrefix(created.Webhook.Secret, "whsec_") || created.Webhook.URL != rc.srv.URL+"/hook?x=1" {
				t.Fatalf("created %s", r.body)
			}
			secret := created.Webhook.Secret
			rc.mu.Lock()
			rc.secret = secret
			rc.mu.Unlock()
			// The secret is shown once.
			got, raw := e.hookSub("t1", created.ID)
			if strings.Contains(string(raw), secret) || strings.Contains(string(raw), "whsec_") || got.Webhook == nil || got.Webhook.Secret != "" {
				t.Fatalf("GET shows the secret: %s", raw)
			}
			if st := got.Webhook.Status; st == nil || st.Failing || st.ConsecutiveFailures != 0 {
				t.Fatalf("fresh status %s", raw)
			}
			list := e.call("t1", "GET", "/subscriptions", nil).ok(t)
			if strings.Contains(string(list.body), "whsec_") {
				t.Fatalf("list shows the secret: %s", list.body)
			}

			// The first request is refused with 503 and Retry-After: 7.
			var refused atomic.Bool
			rc.set(func(*http.Request) (int, http.Header, string) {
				if refused.CompareAndSwap(false, true) {
					return 503, http.Header{"Retry-After": {"7"}}, "busy"
				}
				return 204, nil, ""
			})
			// Writes: two entities, the first updated twice.
			a, _ := e.create("t1", "order", 1, `{"total": 1, "customer": "a"}`)
			b, _ := e.create("t1", "order", 1, `{"total": 2, "customer": "b"}`)
			for i := 2; i <= 3; i++ {
				if r := e.call("t1", "PATCH", "/entity/JSON/"+a, []byte(fmt.Sprintf(`{"total": %d}`, 10*i)),
					"Content-Type", "application/merge-patch+json", "If-Match", "*"); r.status != 200 {
					t.Fatalf("update: %d %s", r.status, r.body)
				}
			}
			evs := await.Value(t, time.Minute, func() ([]changefeed.Event, bool) {
				d := rc.distinct()
				return d, len(d) >= 4
			}, "the receiver never got the four events")
			rc.mu.Lock()
			bad, ids, answers := rc.bad, append([]string(nil), rc.ids...), append([]int(nil), rc.answers...)
			rc.mu.Unlock()
			if len(bad) > 0 {
				t.Fatalf("requests failed verification: %v", bad)
			}
			if len(evs) != 4 {
				t.Fatalf("events %+v", evs)
			}
			// In commit order per entity (and here overall: one writer).
			var totals []string
			for _, ev := range evs {
				var body struct {
					Total int `json:"total"`
				}
				_ = json.Unmarshal(ev.BodyAfter, &body)
				totals = append(totals, fmt.Sprintf("%s:%s:%d", map[string]string{a: "a", b: "b"}[ev.EntityID], ev.Kind, body.Total))
			}
			if want := "a:CREATE:1 b:CREATE:2 a:UPDATE:20 a:UPDATE:30"; strings.Join(totals, " ") != want {
				t.Fatalf("events %v, want %s", totals, want)
			}
			// The 503 was retried after its Retry-After, with the same id.
			if answers[0] != 503 || len(ids) < 2 || ids[0] != ids[1] {
				t.Fatalf("answers %v ids %v", answers, ids)
			}
			if w := ws.all(); len(w) == 0 || w[0] != 7*time.Second {
				t.Fatalf("retry waits %v, want 7s first", w)
			}
			// At most two events a request: at least two requests after the retry.
			if len(ids) < 3 {
				t.Fatalf("requests %v: batches of at most two", ids)
			}
			// Everything acknowledged: no lag, no failure shown.
			await.Until(t, time.Minute, func() bool {
				s, _ := e.hookSub("t1", created.ID)
				return s.Lag != nil && s.Lag.Events == 0
			}, "the deliveries were never acknowledged")
			s, raw := e.hookSub("t1", created.ID)
			if st := s.Webhook.Status; st.Failing || st.ConsecutiveFailures != 0 {
				t.Fatalf("after recovery: %s", raw)
			}

			// A receiver that keeps failing is marked, with its last error.
			rc.set(func(*http.Request) (int, http.Header, string) { return 500, nil, "receiver down\nline two" })
			e.create("t1", "order", 1, `{"total": 5, "customer": "c"}`)
			s = await.Value(t, time.Minute, func() (hookSub, bool) {
				s, _ := e.hookSub("t1", created.ID)
				return s, s.Webhook.Status != nil && s.Webhook.Status.Failing
			}, "the failing receiver was never marked")
			st := s.Webhook.Status
			if st.ConsecutiveFailures < 3 || st.LastError != "HTTP 500: receiver down line two" || st.LastAttemptAt == nil || st.NextAttemptAt == nil {
				t.Fatalf("failing status %+v", st)
			}
			// Exponential waits, jittered into their upper half, capped.
			w := ws.all()
			for i, d := range w[1:] {
				lo := min(time.Second<<i, 8*time.Second) / 2
				if d < lo || d > 2*lo {
					t.Fatalf("wait %d after failure %d: %s, want [%s, %s] (all %v)", i+1, i+1, d, lo, 2*lo, w)
				}
			}
			// It answers again: the event arrives and the mark is cleared.
			rc.set(nil)
			await.Until(t, time.Minute, func() bool { return len(rc.distinct()) == 5 }, "the fifth event never arrived")
			await.Until(t, time.Minute, func() bool {
				s, _ := e.hookSub("t1", created.ID)
				return !s.Webhook.Status.Failing && s.Webhook.Status.ConsecutiveFailures == 0 && s.Lag.Events == 0
			}, "the mark was never cleared")

			// Deleting the subscription stops delivery.
			if r := e.call("t1", "DELETE", "/subscriptions/"+created.ID, nil); r.status != 204 {
				t.Fatalf("delete: %d", r.status)
			}
		})
	}
}

// netguardOptions trusts the receiver's certificate and lets delivery
// reach it on loopback (SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS).
func netguardOptions(rc *receiver) netguard.Options {
	return netguard.Options{AllowPrivate: true, RootCAs: rc.roots()}
}

// TestWebhookRefusals: the definition is checked at create (https only,
// a host the SSRF guard lets through, DURABLE, no client-written secret)
// with 400 naming webhook.url or webhook; and the guard holds at dial
// time: a name that resolved to a public address at create and to
// loopback afterwards (DNS rebinding) is refused when delivering, which
// the resource shows as its last error.
func TestWebhookRefusals(t *testing.T) {
	rc := newReceiver(t)
	public := netguardtest.FakeDNS(t, map[string][]netip.Addr{"hooks.test": {netip.MustParseAddr("203.0.113.10")}})
	rebound := netguardtest.FakeDNS(t, map[string][]netip.Addr{"hooks.test": {netip.MustParseAddr("127.0.0.1")}})
	var rebind atomic.Bool
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if rebind.Load() {
			return rebound.Dial(ctx, network, addr)
		}
		return public.Dial(ctx, network, addr)
	}}
	ws := &waits{}
	e := newHookEnv(t, "memory", changefeed.WebhookOptions{Net: netguard.Options{RootCAs: rc.roots(), Resolver: res},
		FailingAfter: 1, After: ws.after, Rescan: time.Hour, Timeout: 5 * time.Second})
	e.lockedModel("t1", "order", 1, `{"total": 1, "customer": "c"}`)

	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.srv.URL, "https://"))
	for _, c := range []struct{ body, path, text string }{
		{`"webhook":{"url":"` + rc.srv.URL + `/"}`, "webhook.url", "blocked address range"},
		{`"webhook":{"url":"https://10.1.2.3/"}`, "webhook.url", "blocked"},
		{`"webhook":{"url":"https://169.254.169.254/latest"}`, "webhook.url", "blocked"},
		{`"webhook":{"url":"https://[::1]:` + port + `/"}`, "webhook.url", "blocked"},
		{`"webhook":{"url":"http://hooks.test/"}`, "webhook.url", "https is required"},
		{`"webhook":{"url":"https://user:pw@hooks.test/"}`, "webhook.url", "credentials"},
		{`"webhook":{"url":"/relative"}`, "webhook.url", "absolute"},
		{`"webhook":{"url":"https://hooks.test/","secret":"whsec_AAAA"}`, "webhook", "only url"},
		{`"delivery":"LIVE_ONLY","webhook":{"url":"https://hooks.test/"}`, "webhook", "DURABLE"},
	} {
		r := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1},`+c.body+`}`))
		props := r.problem(t, 400, "BAD_REQUEST")
		if props["path"] != c.path || !strings.Contains(string(r.body), c.text) {
			t.Errorf("%s: %s", c.body, r.body)
		}
	}

	// DNS rebinding: public at create, loopback when dialled.
	r := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1},"webhook":{"url":"https://hooks.test:`+port+`/"}}`))
	if r.status != 201 {
		t.Fatalf("create with a public answer: %d %s", r.status, r.body)
	}
	var sub hookSub
	r.decode(t, &sub)
	rebind.Store(true)
	e.create("t1", "order", 1, `{"total": 2, "customer": "c"}`)
	s := await.Value(t, time.Minute, func() (hookSub, bool) {
		s, _ := e.hookSub("t1", sub.ID)
		return s, s.Webhook.Status != nil && s.Webhook.Status.Failing
	}, "the rebound receiver was never refused")
	if !strings.Contains(s.Webhook.Status.LastError, "SSRF guard") || !strings.Contains(s.Webhook.Status.LastError, "127.0.0.1") {
		t.Fatalf("last error %q", s.Webhook.Status.LastError)
	}
	rc.mu.Lock()
	reached := len(rc.ids)
	rc.mu.Unlock()
	if reached != 0 {
		t.Fatalf("the receiver on loopback was reached %d times", reached)
	}
}

// TestWebhookTimeout: a receiver that never answers costs one request
// timeout (SVC_WEBHOOK_TIMEOUT) per attempt, shown as the last error.
func TestWebhookTimeout(t *testing.T) {
	silent := netguardtest.NewSilent(t)
	ws := &waits{}
	e := newHookEnv(t, "memory", changefeed.WebhookOptions{Net: netguard.Options{AllowPrivate: true},
		Timeout: 200 * time.Millisecond, FailingAfter: 2, After: ws.after, Rescan: time.Hour})
	e.lockedModel("t1", "order", 1, `{"total": 1, "customer": "c"}`)
	r := e.call("t1", "POST", "/subscriptions", []byte(`{"filter":{"modelName":"order","modelVersion":1},"webhook":{"url":"`+silent.URL+`/"}}`))
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var sub hookSub
	r.decode(t, &sub)
	e.create("t1", "order", 1, `{"total": 2, "customer": "c"}`)
	s := await.Value(t, time.Minute, func() (hookSub, bool) {
		s, _ := e.hookSub("t1", sub.ID)
		return s, s.Webhook.Status != nil && s.Webhook.Status.Failing
	}, "the silent receiver was never marked failing")
	if !strings.Contains(s.Webhook.Status.LastError, "timed out") {
		t.Fatalf("last error %q", s.Webhook.Status.LastError)
	}
}

// TestWebhookLease: on memory, SQLite and PostgreSQL, one node at a time
// holds a webhook subscription's delivery lease: another node's claim
// fails while it runs, succeeds once it expired or was given up, and a
// renewal by the holder keeps it; a deleted subscription's lease is
// NOT_FOUND.
func TestWebhookLease(t *testing.T) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			var st storage.Webhooks
			switch engine {
			case "postgres":
				st = newEntityPostgres(t).Webhooks()
			case "sqlite":
				st = sqlitetest.Open(t).Webhooks()
			default:
				st = memory.NewWebhooks()
			}
			ctx := context.Background()
			if err := st.CreateWebhook(ctx, &storage.Webhook{Tenant: "t1", ID: "s1", Secret: "whsec_AAAA"}); err != nil {
				t.Fatal(err)
			}
			t0 := time.Unix(1_700_000_000, 0)
			claim := func(owner string, now time.Time) bool {
				t.Helper()
				ok, err := st.ClaimWebhook(ctx, "t1", "s1", owner, now, now.Add(30*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			if !claim("a", t0) || claim("b", t0.Add(time.Second)) || !claim("a", t0.Add(10*time.Second)) {
				t.Fatal("a holds, b is refused, a renews")
			}
			if claim("b", t0.Add(39*time.Second)) || !claim("b", t0.Add(40*time.Second)) || claim("a", t0.Add(41*time.Second)) {
				t.Fatal("b takes an expired lease only")
			}
			if err := st.ReleaseWebhook(ctx, "t1", "s1", "a"); err != nil || claim("a", t0.Add(42*time.Second)) {
				t.Fatal("a cannot give b's lease up")
			}
			if err := st.ReleaseWebhook(ctx, "t1", "s1", "b"); err != nil || !claim("a", t0.Add(43*time.Second)) {
				t.Fatal("a given-up lease is free")
			}
			// The state round-trips without touching the secret.
			at := t0.Add(time.Minute).UTC()
			if err := st.RecordWebhook(ctx, &storage.Webhook{Tenant: "t1", ID: "s1", ConsecutiveFailures: 3, Failing: true,
				LastError: "HTTP 500", LastAttemptAt: at, NextAttemptAt: at.Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
			w, err := st.GetWebhook(ctx, "t1", "s1")
			if err != nil || w.Secret != "whsec_AAAA" || w.ConsecutiveFailures != 3 || !w.Failing || w.LastError != "HTTP 500" ||
				!w.LastAttemptAt.Equal(at) || !w.NextAttemptAt.Equal(at.Add(time.Second)) {
				t.Fatalf("state %+v %v", w, err)
			}
			if err := st.CreateWebhook(ctx, &storage.Webhook{Tenant: "t1", ID: "s1", Secret: "x"}); !errors.Is(err, storage.ErrExists) {
				t.Fatalf("second create: %v", err)
			}
			if err := st.DeleteWebhook(ctx, "t1", "s1"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.ClaimWebhook(ctx, "t1", "s1", "a", t0, t0); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("claim after delete: %v", err)
			}
			if _, err := st.GetWebhook(ctx, "t1", "s1"); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("get after delete: %v", err)
			}
		})
	}
}
