package crud_test

import (
	"context"
	"crypto/rsa"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/authcache"
	"svc/compute"
	"svc/compute/crud"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/entity"
	"svc/iam"
	"svc/internal/testkeys"
	"svc/model"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

// signingKey is a fixed test key (generating one costs seconds under -race).
func signingKey(t testing.TB) *rsa.PrivateKey { return testkeys.RSA(5) }

// crudEnv is svc's compute gRPC server with the real entity, model and
// search services on one storage backend, authenticating members with the
// jwt verification chain (authcache over iam keys) and real RS256 tokens.
type crudEnv struct {
	t      testing.TB
	client cloudapi.CloudEventsServiceClient
	keys   *iam.Keys
	ents   *entity.Service
	// Tokens: ROLE_M2M in tenants A and B, and a tenant-A user without it.
	tokA, tokB, tokUser string
}

// envOptions adjust the services before the server starts.
type envOptions struct {
	// wrapEntities replaces the entity service the server sees.
	wrapEntities func(crud.Entities) crud.Entities
}

func newCrudEnv(t testing.TB, backend string, opt envOptions) *crudEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var sr storage.Searcher
	var jobs storage.SearchJobs
	switch backend {
	case "postgres":
		db := pgtestdb.Open(t, pgtest.New(t, "computecrud"), 8, time.Minute)
		ms, es, sr, jobs = db.Models(), db.Entities(), db.Search(time.Minute), db.SearchJobs()
	case "sqlite":
		db := sqlitetest.Open(t)
		ms, es, sr, jobs = db.Models(), db.Entities(), db.Search(), db.SearchJobs()
	default:
		me := memory.NewEntities()
		ms, es, sr, jobs = memory.NewModels(), me, memory.NewSearch(me), memory.NewSearchJobs()
	}
	msvc := model.New(ms, nil)
	ssvc := search.New(ms, sr, jobs, search.Options{Workers: 1, Queue: 16, SnapshotTTL: time.Hour,
		Heartbeat: time.Second, StaleAfter: time.Minute, ReapInterval: time.Hour})
	ssvc.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ssvc.Stop(ctx)
	})
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithXML(entity.XMLToJSON), entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)

	keys, err := iam.NewKeys(memory.NewIAMStores().Keypairs, signingKey(t), iam.AudienceClient, 365)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	cache, err := authcache.New(keys, nil, authcache.Options{Issuer: "svc", ReconcileInterval: time.Minute, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)

	var ents crud.Entities = esvc
	if opt.wrapEntities != nil {
		ents = opt.wrapEntities(esvc)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	verify := &authcache.TokenVerifier{C: cache, Log: log}
	srv := compute.New(compute.Config{}, verify, log)
	srv.Start(lis, crud.New(crud.Services{Entities: ents, Models: msvc, Search: ssvc}, verify, log))
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	env := &crudEnv{t: t, client: cloudapi.NewCloudEventsServiceClient(conn), keys: keys, ents: esvc}
	env.tokA = env.mint("tenant-a", "svc-a", iam.RoleM2M)
	env.tokB = env.mint("tenant-b", "svc-b", iam.RoleM2M)
	env.tokUser = env.mint("tenant-a", "u1", "ROLE_USER")
	return env
}

// mint signs an RS256 token with the bootstrap key, as the token endpoint
// would issue it.
func (e *crudEnv) mint(tenant, sub string, roles ...string) string {
	e.t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": sub, "iss": "svc", "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "caas_org_id": tenant, "user_roles": roles})
	tok.Header["kid"] = e.keys.BootstrapKID()
	s, err := tok.SignedString(signingKey(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func authCtx(token string, kv ...string) context.Context {
	ctx := context.Background()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	if len(kv) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	}
	return ctx
}

// event builds a request event with v as JSON text data.
func event(id, typ string, v any) *ce.CloudEvent {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &ce.CloudEvent{Id: id, Source: "test", SpecVersion: "1.0", Type: typ, Data: &ce.CloudEvent_TextData{TextData: string(b)}}
}

type obj = map[string]any

// call runs a unary RPC ("manage", "search" or "model") and decodes the
// response into out; it returns the response type.
func (e *crudEnv) call(token, rpc, typ string, req obj, out any) (string, error) {
	e.t.Helper()
	ev := event("req-"+typ, typ, req)
	var resp *ce.CloudEvent
	var err error
	ctx := authCtx(token)
	switch rpc {
	case "manage":
		resp, err = e.client.EntityManage(ctx, ev)
	case "search":
		resp, err = e.client.EntitySearch(ctx, ev)
	case "model":
		resp, err = e.client.EntityModelManage(ctx, ev)
	default:
		e.t.Fatalf("unknown rpc %s", rpc)
	}
	if err != nil {
		return "", err
	}
	if resp.GetSource() != wire.ServerSource || resp.GetSpecVersion() != "1.0" || resp.GetId() == "" {
		e.t.Fatalf("response envelope: id=%q source=%q spec=%q", resp.GetId(), resp.GetSource(), resp.GetSpecVersion())
	}
	if err := json.Unmarshal([]byte(resp.GetTextData()), out); err != nil {
		e.t.Fatalf("decoding %s: %v: %s", resp.GetType(), err, resp.GetTextData())
	}
	return resp.GetType(), nil
}

// stream runs a streaming RPC ("manageCollection" or "searchCollection")
// and returns the raw events.
func (e *crudEnv) stream(token, rpc, typ string, req obj) ([]*ce.CloudEvent, error) {
	e.t.Helper()
	ev := event("req-"+typ, typ, req)
	ctx := authCtx(token)
	var st grpc.ServerStreamingClient[ce.CloudEvent]
	var err error
	if rpc == "manageCollection" {
		st, err = e.client.EntityManageCollection(ctx, ev)
	} else {
		st, err = e.client.EntitySearchCollection(ctx, ev)
	}
	if err != nil {
		return nil, err
	}
	var out []*ce.CloudEvent
	for {
		r, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, r)
	}
}

func decode[T any](t testing.TB, ev *ce.CloudEvent) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(ev.GetTextData()), &v); err != nil {
		t.Fatalf("decoding %s: %v", ev.GetType(), err)
	}
	return v
}
