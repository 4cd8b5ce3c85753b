package fast

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

// modelEngines are the storage engines every model API test runs on.
var modelEngines = []string{"memory", "sqlite", "postgres"}

// tokenTenants is a test authenticator: "Bearer <tenant>" acts in that
// tenant, anything else is 401.
type tokenTenants struct{}

func (tokenTenants) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	h := string(ctx.Request.Header.Peek("Authorization"))
	t, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || t == "" {
		return nil, fmt.Errorf("no bearer")
	}
	return &iam.Principal{Kind: "user", UserID: "u-" + t, TenantID: t, Roles: []string{iam.RoleAdmin}}, nil
}

// stubEntityCounter is a test double for the entity store's count.
type stubEntityCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *stubEntityCounter) set(tenant string, key storage.ModelKey, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[fmt.Sprintf("%s/%s/%d", tenant, key.Name, key.Version)] = n
}

func (c *stubEntityCounter) CountEntities(_ context.Context, tenant string, key storage.ModelKey) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[fmt.Sprintf("%s/%s/%d", tenant, key.Name, key.Version)], nil
}

// modelEnv is a running server over one engine, reached over loopback.
type modelEnv struct {
	t        testing.TB
	base     string
	store    storage.Models
	svc      *model.Service
	entities *stubEntityCounter
	client   *http.Client
}

// newPostgresModels creates a uniquely named database for one top-level
// test and drops it when the test ends (the fast package has no TestMain
// of its own, so areas sharing it do not collide on one).
func newPostgresModels(t testing.TB) storage.Models {
	t.Helper()
	db := pgtestdb.Open(t, pgtest.New(t, "fastmodel"), 8, time.Minute)
	return db.Models()
}

func newModelStore(t testing.TB, engine string) storage.Models {
	if engine == "postgres" {
		return newPostgresModels(t)
	}
	if engine == "sqlite" {
		return sqlitetest.Open(t).Models()
	}
	return memory.NewModels()
}

func newModelEnv(t testing.TB, engine string) *modelEnv {
	t.Helper()
	store := newModelStore(t, engine)
	ents := &stubEntityCounter{}
	svc := model.New(store, ents)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: tokenTenants{}, Model: svc})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &modelEnv{t: t, base: base, store: store, svc: svc, entities: ents, client: client}
}

type apiResp struct {
	status int
	ctype  string
	body   []byte
}

func (r apiResp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// problem checks a problem+json answer and returns its properties.
func (r apiResp) problem(t testing.TB, status int, code string) map[string]any {
	t.Helper()
	if r.status != status || r.ctype != "application/problem+json" {
		t.Fatalf("got %d %s, want %d problem+json: %s", r.status, r.ctype, status, r.body)
	}
	m := r.json(t)
	props, _ := m["properties"].(map[string]any)
	if props["errorCode"] != code {
		t.Fatalf("errorCode %v, want %s: %s", props["errorCode"], code, r.body)
	}
	if !strings.HasPrefix(m["detail"].(string), code+": ") {
		t.Fatalf("detail %q does not start with the code", m["detail"])
	}
	return props
}

// call sends one request as tenant ("" sends no token).
func (e *modelEnv) call(tenant, method, path string, body []byte) apiResp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("Authorization", "Bearer "+tenant)
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
	return apiResp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
}

// seed stores a model directly, bypassing import.
func (e *modelEnv) seed(tenant, name string, version int, state string, schema string) {
	e.t.Helper()
	m := &storage.Model{Tenant: tenant, Key: storage.ModelKey{Name: name, Version: version}, State: state, Schema: []byte(schema)}
	if err := e.store.PutModel(context.Background(), m); err != nil {
		e.t.Fatal(err)
	}
}
