package changes_test

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/authcache"
	"svc/changefeed"
	"svc/compute"
	"svc/compute/changes"
	cfpb "svc/compute/pb/changefeed"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/entity"
	"svc/iam"
	"svc/internal/testkeys"
	"svc/model"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

// entityActor writes the benchmarks' entities.
var entityActor = entity.Actor{Tenant: "tenant-a", User: "writer", Kind: "service"}

// signingKey is a fixed test key (generating one costs seconds under -race).
func signingKey() *rsa.PrivateKey { return testkeys.RSA(5) }

// env is svc's gRPC server (compute.Server) with the change feed's door
// registered on it, over one engine, wired as cmd/svc wires it: the entity
// service writes through the Recorder, whose commits wake the hub. Callers
// authenticate with real RS256 tokens through the jwt verification chain.
type env struct {
	t      testing.TB
	feed   *changefeed.Service
	hub    *changefeed.Hub
	door   *changes.Server
	srv    *compute.Server
	ents   *entity.Service
	models *model.Service
	client cfpb.EntityChangeServiceClient
	addr   string // the gRPC listener
	keys   *iam.Keys
	// Tokens: ROLE_M2M in tenants A and B, ROLE_ADMIN in A, a tenant-A
	// user with neither.
	tokA, tokB, tokAdmin, tokUser string
}

func newEnv(t testing.TB, engine string) *env {
	t.Helper()
	return newEnvWith(t, engine, changes.Options{})
}

// newEnvWith is newEnv with the door's options (its Log is set here).
func newEnvWith(t testing.TB, engine string, opt changes.Options) *env {
	t.Helper()
	var ms storage.Models
	var ents storage.Entities
	var log storage.ChangeLog
	var subs storage.Subscriptions
	switch engine {
	case "postgres":
		db := pgtestdb.Open(t, pgtest.New(t, "computechanges"), 8, time.Minute)
		ms, ents, log, subs = db.Models(), db.Entities(), db.Changes(), db.Subscriptions()
	case "sqlite":
		db := sqlitetest.Open(t)
		ms, ents, log, subs = db.Models(), db.Entities(), db.Changes(), db.Subscriptions()
	default:
		m := memory.NewEntities()
		ms, ents, log, subs = memory.NewModels(), m, m.Changes(), memory.NewSubscriptions()
	}
	w := &changefeed.Watched{}
	feed := changefeed.New(subs, log, w, changefeed.Options{})
	hub := changefeed.NewHub(feed, changefeed.HubOptions{Poll: time.Hour})
	rec := changefeed.NewRecorder(ents, w, hub.Notify)
	hub.Start()
	msvc := model.New(ms, nil)
	esvc := entity.New(rec, ms, entity.GateOf(msvc))
	msvc.SetEntityCounter(esvc)

	keys, err := iam.NewKeys(memory.NewIAMStores().Keypairs, signingKey(), iam.AudienceClient, 365)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	cache, err := authcache.New(keys, nil, authcache.Options{Issuer: "svc", ReconcileInterval: time.Minute, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	verify := &authcache.TokenVerifier{C: cache, Log: quiet}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := compute.New(compute.Config{}, verify, quiet)
	opt.Log = quiet
	door := changes.New(hub, verify, opt)
	door.Register(srv)
	srv.Start(lis, nil)
	// As cmd/svc: the hub stops first (streams get their final event),
	// then the gRPC server.
	t.Cleanup(srv.Stop)
	t.Cleanup(hub.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(changes.MaxMessageBytes)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	e := &env{t: t, feed: feed, hub: hub, door: door, srv: srv, ents: esvc, models: msvc,
		client: cfpb.NewEntityChangeServiceClient(conn), addr: lis.Addr().String(), keys: keys}
	e.tokA = e.mint("tenant-a", "svc-a", iam.RoleM2M)
	e.tokB = e.mint("tenant-b", "svc-b", iam.RoleM2M)
	e.tokAdmin = e.mint("tenant-a", "admin-a", iam.RoleAdmin)
	e.tokUser = e.mint("tenant-a", "u1", "ROLE_USER")
	return e
}

// mint signs an RS256 token with the bootstrap key, as the token endpoint
// would issue it.
func (e *env) mint(tenant, sub string, roles ...string) string {
	e.t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": sub, "iss": "svc", "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "caas_org_id": tenant, "user_roles": roles})
	tok.Header["kid"] = e.keys.BootstrapKID()
	s, err := tok.SignedString(signingKey())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// lockedModel imports a sample as model name/1 of tenant and locks it.
func (e *env) lockedModel(tenant, name string) storage.ModelKey {
	e.t.Helper()
	key := storage.ModelKey{Name: name, Version: 1}
	if _, err := e.models.Import(context.Background(), tenant, key, model.FormatJSON, model.ConvSampleData, []byte(`{"n":1,"s":"x"}`)); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.models.Lock(context.Background(), tenant, key); err != nil {
		e.t.Fatal(err)
	}
	return key
}

func (e *env) subscribe(tenant, spec string) *changefeed.Subscription {
	e.t.Helper()
	sub, err := e.feed.Create(context.Background(), tenant, []byte(spec))
	if err != nil {
		e.t.Fatal(err)
	}
	return sub
}

// create writes one entity; it returns the eventId its event must have.
func (e *env) create(tenant string, key storage.ModelKey, n int) (entityID, eventID string) {
	e.t.Helper()
	res, err := e.ents.Create(context.Background(), entity.Actor{Tenant: tenant, User: "writer", Kind: "service"}, key, "JSON",
		fmt.Appendf(nil, `{"n":%d,"s":"x"}`, n), 1)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.Err != nil {
		e.t.Fatal(res.Err)
	}
	c := res.Chunks[0]
	id := uuid.UUID(c.IDs[0]).String()
	return id, uuid.UUID(c.TxID).String() + ":" + id
}

func (e *env) update(tenant string, id string, n int) string {
	e.t.Helper()
	tx, err := e.ents.Update(context.Background(), entity.Actor{Tenant: tenant, User: "writer", Kind: "service"}, uuid.MustParse(id),
		"JSON", fmt.Appendf(nil, `{"n":%d,"s":"y"}`, n), "", "")
	if err != nil {
		e.t.Fatal(err)
	}
	return uuid.UUID(tx).String() + ":" + id
}

// storedCursor is the subscription's acknowledged cursor.
func (e *env) storedCursor(tenant, id string) string {
	e.t.Helper()
	sub, err := e.feed.Get(context.Background(), tenant, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return sub.Cursor
}

// stream is a client's end of EntityChangeService.Stream.
type stream struct {
	t      testing.TB
	s      cfpb.EntityChangeService_StreamClient
	cancel context.CancelFunc
	msgs   chan *ce.CloudEvent
	err    error // set before msgs closes
	mu     sync.Mutex
	got    int // EntityChangeEvents received
}

// open attaches to a subscription with token; it returns the stream
// after the server's EntityChangeAttachResponse, or the status the
// stream ended with instead.
func (e *env) open(token string, a changes.Attach) (*stream, *changes.Attached, error) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	cs, err := e.client.Stream(ctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	msg, err := wire.New("test", changes.TypeAttachRequest, a)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cs.Send(msg); err != nil && !errors.Is(err, io.EOF) {
		cancel()
		return nil, nil, err
	}
	first, err := cs.Recv()
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if first.GetType() != changes.TypeAttachResponse {
		cancel()
		e.t.Fatalf("first message %s", first.GetType())
	}
	var at changes.Attached
	if err := wire.Decode(first, &at); err != nil {
		e.t.Fatal(err)
	}
	s := &stream{t: e.t, s: cs, cancel: cancel, msgs: make(chan *ce.CloudEvent, 10000)}
	go func() {
		defer close(s.msgs)
		for {
			m, err := cs.Recv()
			if err != nil {
				s.err = err
				return
			}
			if m.GetType() == changes.TypeEvent {
				s.mu.Lock()
				s.got++
				s.mu.Unlock()
			}
			s.msgs <- m
		}
	}()
	e.t.Cleanup(cancel)
	return s, &at, nil
}

func (s *stream) received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// next is the next message; the test fails if the stream ends first.
func (s *stream) next() *ce.CloudEvent {
	s.t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.t.Fatalf("stream ended: %v", s.err)
		}
		return m
	case <-time.After(60 * time.Second):
		s.t.Fatal("no message within 60s")
	}
	panic("unreachable")
}

// event is the next message, which must be an EntityChangeEvent.
func (s *stream) event() (changefeed.Event, *ce.CloudEvent) {
	s.t.Helper()
	m := s.next()
	if m.GetType() != changes.TypeEvent {
		s.t.Fatalf("message %s: %s", m.GetType(), m.GetTextData())
	}
	ev, err := changes.Decode(m)
	if err != nil {
		s.t.Fatal(err)
	}
	if m.GetId() != ev.EventID || m.GetAttributes()[changes.AttrCursor].GetCeString() != ev.Cursor {
		s.t.Fatalf("envelope %s / %v does not match the event %+v", m.GetId(), m.GetAttributes(), ev)
	}
	return ev, m
}

// end waits for the stream to end and returns its status error (nil when
// it ended OK).
func (s *stream) end() error {
	s.t.Helper()
	for {
		select {
		case _, ok := <-s.msgs:
			if !ok {
				if errors.Is(s.err, io.EOF) {
					return nil
				}
				return s.err
			}
		case <-time.After(60 * time.Second):
			s.t.Fatal("stream did not end within 60s")
		}
	}
}

func (s *stream) ack(cursor string) {
	s.t.Helper()
	msg, err := wire.New("test", changes.TypeAckRequest, changes.Ack{Cursor: cursor})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.s.Send(msg); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stream) close() { s.cancel() }
