package fast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/audit"
	"svc/compute"
	"svc/compute/member"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage/memory"
	"svc/workflow"
)

// memberTokens is the compute listener's verifier in behaviour tests:
// "m2m-<tenant>" is a service of that tenant with ROLE_M2M, "user-<tenant>"
// one without it.
type memberTokens struct{}

func (memberTokens) VerifyToken(_ context.Context, tok string) (*iam.Principal, error) {
	if t, ok := strings.CutPrefix(tok, "m2m-"); ok {
		return &iam.Principal{Kind: "service", UserID: "m-" + t, TenantID: t, Roles: []string{iam.RoleM2M}}, nil
	}
	if t, ok := strings.CutPrefix(tok, "user-"); ok {
		return &iam.Principal{Kind: "user", UserID: "u-" + t, TenantID: t, Roles: []string{"ROLE_USER"}}, nil
	}
	return nil, errors.New("unknown token")
}

// behavEnv is the whole write path as serve.go wires it, over loopback:
// the HTTP API (models, workflows, entities, audit) on one engine, the
// workflow engine with predicate criteria, and the compute gRPC listener
// as its dispatcher, which tests join with svc's member client.
type behavEnv struct {
	*entityEnv
	grpcAddr string
	compute  *compute.Server
}

func newBehavEnv(t testing.TB, engine string, ccfg compute.Config) *behavEnv {
	t.Helper()
	ms, es, as, sr := testStores(t, engine)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	csrv := compute.New(ccfg, memberTokens{}, slog.New(slog.DiscardHandler))
	csrv.Start(lis, nil)
	t.Cleanup(csrv.Stop)

	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: csrv, Log: slog.New(slog.DiscardHandler)}
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithXML(entity.XMLToJSON),
		entity.WithWorkflow(entity.NewEngineWorkflow(eng)), entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Audit: audit.New(as, es)})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &behavEnv{entityEnv: &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc},
		grpcAddr: lis.Addr().String(), compute: csrv}
}

// with binds the environment to a subtest.
func (e *behavEnv) with(t testing.TB) *behavEnv {
	c := *e
	c.entityEnv = e.entityEnv.with(t)
	return &c
}

// member joins svc's member client for tenant with tags; it leaves when
// the test ends.
func (e *behavEnv) member(tenant string, h member.Handlers, tags ...string) *member.Member {
	e.t.Helper()
	m, err := member.Connect(context.Background(), member.Config{Endpoint: e.grpcAddr, Token: "m2m-" + tenant, Tags: tags,
		Log: slog.New(slog.DiscardHandler)}, h)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { m.Close() })
	return m
}

// rawStream opens startStreaming with a bare gRPC client, for members
// that misbehave on purpose.
func (e *behavEnv) rawStream(token string) (grpc.BidiStreamingClient[ce.CloudEvent, ce.CloudEvent], context.CancelFunc) {
	e.t.Helper()
	conn, err := grpc.NewClient(e.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	st, err := cloudapi.NewCloudEventsServiceClient(conn).StartStreaming(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cancel(); conn.Close() })
	return st, cancel
}

// workflows imports workflows into a model (REPLACE unless the body says
// otherwise) and fails the test on anything but 200.
func (e *behavEnv) workflows(tenant, name string, version int, body string) {
	e.t.Helper()
	r := e.call(tenant, "POST", fmt.Sprintf("/model/%s/%d/workflow/import", name, version), []byte(body))
	if r.status != 200 {
		e.t.Fatalf("workflow import: %d %s", r.status, r.body)
	}
}

// trail is an entity's audit kinds, oldest first.
func (e *behavEnv) trail(tenant, id, query string) []auditItem {
	e.t.Helper()
	var p auditPage
	e.call(tenant, "GET", "/audit/entity/"+id+"?limit=1000"+query, nil).ok(e.t).decode(e.t, &p)
	out := make([]auditItem, len(p.Items))
	for i, it := range p.Items {
		out[len(p.Items)-1-i] = it
	}
	return out
}

func trailKinds(items []auditItem) string {
	s := make([]string, len(items))
	for i, it := range items {
		s[i] = it.kind()
	}
	return strings.Join(s, " ")
}
