package compute

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/compute/member"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/iam"
	"svc/internal/await"
)

// tokens is a test double for the jwt verifier: fixed tokens map to
// principals.
type tokens map[string]*iam.Principal

func (t tokens) VerifyToken(_ context.Context, tok string) (*iam.Principal, error) {
	if p := t[tok]; p != nil {
		return p, nil
	}
	return nil, errors.New("bad token")
}

var testTokens = tokens{
	"m2m-t1":  {Kind: "service", UserID: "svc-1", TenantID: "t1", Roles: []string{iam.RoleM2M}},
	"m2m-t2":  {Kind: "service", UserID: "svc-2", TenantID: "t2", Roles: []string{iam.RoleM2M}},
	"user-t1": {Kind: "user", UserID: "u1", TenantID: "t1", Roles: []string{"ROLE_USER"}},
}

// startServer serves on a loopback listener until the test ends.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, testTokens, slog.New(slog.DiscardHandler))
	s.Start(lis, nil)
	t.Cleanup(s.Stop)
	return s, lis.Addr().String()
}

func connect(t testing.TB, addr, token string, h member.Handlers, tags ...string) *member.Member {
	t.Helper()
	m, err := member.Connect(context.Background(), member.Config{Endpoint: addr, Token: token, Tags: tags,
		Log: slog.New(slog.DiscardHandler)}, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// rawStream opens startStreaming with a bare client, for protocol tests.
func rawStream(t *testing.T, addr, token string) (grpc.BidiStreamingClient[ce.CloudEvent, ce.CloudEvent], context.CancelFunc) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	// A bound for a hung test, not a timing assertion: a 6 MiB join under
	// -race on a loaded machine took more than 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), await.Long)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	st, err := cloudapi.NewCloudEventsServiceClient(conn).StartStreaming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); conn.Close() })
	return st, cancel
}

func textEvent(typ, payload string) *ce.CloudEvent {
	return &ce.CloudEvent{Id: "x", Source: "test", SpecVersion: "1.0", Type: typ, Data: &ce.CloudEvent_TextData{TextData: payload}}
}

// recvUntilError reads until the stream fails and returns the error.
func recvUntilError(st grpc.BidiStreamingClient[ce.CloudEvent, ce.CloudEvent]) ([]*ce.CloudEvent, error) {
	var got []*ce.CloudEvent
	for {
		ev, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return got, nil
			}
			return got, err
		}
		got = append(got, ev)
	}
}
