package fast

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/iam"
	"svc/idempotency"
	"svc/model"
	"svc/platform/config"
	"svc/scheduler"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

// entityEngines are the storage engines every entity API test runs on.
var entityEngines = []string{"memory", "sqlite", "postgres"}

// entityTenantAuth is a test authenticator: "Bearer <tenant>" acts as user
// u-<tenant> in that tenant; anything else is 401.
type entityTenantAuth struct{}

func (entityTenantAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	t, ok := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
	if !ok || t == "" {
		return nil, fmt.Errorf("no bearer")
	}
	return &iam.Principal{Kind: "user", UserID: "u-" + t, TenantID: t}, nil
}

// entityEnv is a running server (model API + entity API) over one engine,
// reached over loopback.
type entityEnv struct {
	t      testing.TB
	base   string
	client *http.Client
	ents   storage.Entities
	models storage.Models
	svc    *entity.Service
	// clock and reserved drive the Idempotency-Key service: the offset of
	// its clock from time.Now, and a hook called once a key is reserved
	// (nil: none). Tests set them before the requests they affect.
	clock    *atomic.Int64
	reserved *atomic.Pointer[func(key string)]
	keys     *idempotency.Service
	// sched and schedSkew are the running scheduler of newScheduledEnv
	// and the offset of its clock from time.Now (scanAhead).
	sched     *scheduler.Scheduler
	schedSkew *atomic.Int64
}

// newEntityPostgres creates a uniquely named database for one test and
// drops it when the test ends.
func newEntityPostgres(t testing.TB) *postgres.DB {
	t.Helper()
	return pgtestdb.Open(t, pgtest.New(t, "fastentity"), 8, time.Minute)
}

func newEntityEnv(t testing.TB, engine string, opts ...entity.Option) *entityEnv {
	t.Helper()
	return newEntityEnvConfig(t, engine, nil, opts...)
}

// newEntityEnvConfig is newEntityEnv with tune applied to the server's
// configuration (nil: the defaults).
func newEntityEnvConfig(t testing.TB, engine string, tune func(*config.Config), opts ...entity.Option) *entityEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var sr storage.Searcher
	var ks storage.IdempotencyKeys
	if engine == "postgres" {
		db := newEntityPostgres(t)
		ms, es, sr, ks = db.Models(), db.Entities(), db.Search(time.Minute), db.IdempotencyKeys()
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, es, sr, ks = db.Models(), db.Entities(), db.Search(), db.IdempotencyKeys()
	} else {
		me := memory.NewEntities()
		ms, es, sr, ks = memory.NewModels(), me, memory.NewSearch(me), me.Keys()
	}
	msvc := model.New(ms, nil)
	// The search service compiles the condition bodies of delete-by-model
	// and grouped stats; its async pool is not started here.
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	esvc := entity.New(es, ms, entity.GateOf(msvc), append([]entity.Option{entity.WithXML(entity.XMLToJSON), entity.WithGroupMax(50),
		entity.WithConditions(ssvc)}, opts...)...)
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if tune != nil {
		tune(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	env := &entityEnv{t: t, ents: es, models: ms, svc: esvc, clock: new(atomic.Int64), reserved: new(atomic.Pointer[func(string)])}
	clock, reserved := env.clock, env.reserved
	env.keys = idempotency.New(ks, idempotency.Options{
		Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load())) },
		Reserved: func(_ context.Context, _, key string) {
			if f := reserved.Load(); f != nil {
				(*f)(key)
			}
		},
	})
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Idempotency: env.keys})
	if err != nil {
		t.Fatal(err)
	}
	env.base, env.client = serveAPI(t, s)
	return env
}

type entityResp struct {
	status int
	ctype  string
	body   []byte
}

func (r entityResp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body (%d) does not decode into %T: %v\n%s", r.status, v, err, r.body)
	}
}

func (r entityResp) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

func (r entityResp) ok(t testing.TB) entityResp {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	return r
}

// problem checks a problem+json answer and returns its properties.
func (r entityResp) problem(t testing.TB, status int, code string) map[string]any {
	t.Helper()
	if r.status != status || r.ctype != "application/problem+json" {
		t.Fatalf("got %d %s, want %d %s problem+json: %s", r.status, r.ctype, status, code, r.body)
	}
	m := r.obj(t)
	props, _ := m["properties"].(map[string]any)
	if props["errorCode"] != code {
		t.Fatalf("errorCode %v, want %s: %s", props["errorCode"], code, r.body)
	}
	if d, _ := m["detail"].(string); !strings.HasPrefix(d, code+": ") {
		t.Fatalf("detail %q does not start with the code", d)
	}
	return props
}

// call sends one request as tenant; hdr are header name/value pairs.
func (e *entityEnv) call(tenant, method, path string, body []byte, hdr ...string) entityResp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return entityResp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
}

// lockedModel imports sample through the model API and locks the model.
func (e *entityEnv) lockedModel(tenant, name string, version int, sample string) {
	e.t.Helper()
	e.call(tenant, "POST", fmt.Sprintf("/model/import/JSON/SAMPLE_DATA/%s/%d", name, version), []byte(sample)).ok(e.t)
	e.call(tenant, "PUT", fmt.Sprintf("/model/%s/%d/lock", name, version), nil).ok(e.t)
}

// txResult is one element of a create/update answer.
type txResult struct {
	TransactionID string   `json:"transactionId"`
	EntityIDs     []string `json:"entityIds"`
	Failed        []struct {
		EntityID string `json:"entityId"`
		Error    struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			ItemIndex int    `json:"itemIndex"`
		} `json:"error"`
	} `json:"failed"`
	Error *struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		ChunkIndex int    `json:"chunkIndex"`
	} `json:"error"`
}

type envelope struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	Meta struct {
		ID       string `json:"id"`
		ModelKey struct {
			Name    string `json:"name"`
			Version any    `json:"version"`
		} `json:"modelKey"`
		State          string  `json:"state"`
		CreationDate   string  `json:"creationDate"`
		LastUpdateTime string  `json:"lastUpdateTime"`
		TransactionID  string  `json:"transactionId"`
		Transition     *string `json:"transitionForLatestSave"`
		PointInTime    *string `json:"pointInTime"`
	} `json:"meta"`
}

// create posts one object and returns the entity id and transaction id.
func (e *entityEnv) create(tenant, name string, version int, doc string) (id, tx string) {
	e.t.Helper()
	var res []txResult
	e.call(tenant, "POST", fmt.Sprintf("/entity/JSON/%s/%d", name, version), []byte(doc)).ok(e.t).decode(e.t, &res)
	if len(res) != 1 || len(res[0].EntityIDs) != 1 {
		e.t.Fatalf("create answer %+v", res)
	}
	return res[0].EntityIDs[0], res[0].TransactionID
}

func (e *entityEnv) get(tenant, path string) envelope {
	e.t.Helper()
	var env envelope
	e.call(tenant, "GET", path, nil).ok(e.t).decode(e.t, &env)
	return env
}

// with binds the environment to a subtest, so failures stop the subtest.
func (e *entityEnv) with(t testing.TB) *entityEnv {
	c := *e
	c.t = t
	return &c
}
