package member_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"svc/compute"
	"svc/compute/member"
	"svc/iam"
)

type m2m struct{}

func (m2m) VerifyToken(_ context.Context, tok string) (*iam.Principal, error) {
	if tok != "m2m" {
		return nil, errors.New("bad token")
	}
	return &iam.Principal{Kind: "service", UserID: "svc-1", TenantID: "t1", Roles: []string{iam.RoleM2M}}, nil
}

func serve(t *testing.T) (*compute.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := compute.New(compute.Config{}, m2m{}, slog.New(slog.DiscardHandler))
	s.Start(lis, nil)
	t.Cleanup(s.Stop)
	return s, lis.Addr().String()
}

// TestRunMovesToTheNextEndpoint: with an endpoint list, Run skips an
// endpoint nobody listens on, joins the next one, and when that server
// goes away joins the one after it rather than waiting for the lost one.
func TestRunMovesToTheNextEndpoint(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	s1, a1 := serve(t)
	s2, a2 := serve(t)

	ctx, cancel := context.WithCancel(context.Background())
	joins := make(chan string, 8)
	done := make(chan error, 1)
	go func() {
		done <- member.Run(ctx, member.Config{Endpoint: deadAddr + ", " + a1 + "," + a2, Token: "m2m", Tags: []string{"r"},
			Log: slog.New(slog.DiscardHandler)}, member.Handlers{}, func(m *member.Member) { joins <- m.Endpoint() })
	}()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case ep := <-joins:
			return ep
		case <-time.After(time.Minute): // generous: a loaded box
			t.Fatal("no join within a minute")
			return ""
		}
	}
	if ep := next(); ep != a1 {
		t.Fatalf("first join through %s, want %s (after the dead %s)", ep, a1, deadAddr)
	}
	if s1.Members("t1") != 1 {
		t.Fatalf("server 1 has %d members", s1.Members("t1"))
	}
	s1.Stop()
	if ep := next(); ep != a2 {
		t.Fatalf("after losing %s the member joined %s, want %s", a1, ep, a2)
	}
	if s2.Members("t1") != 1 {
		t.Fatalf("server 2 has %d members", s2.Members("t1"))
	}
}

func TestConnectUsesTheFirstEndpoint(t *testing.T) {
	_, a := serve(t)
	m, err := member.Connect(context.Background(), member.Config{Endpoints: []string{" ", a, "127.0.0.1:1"}, Token: "m2m",
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Endpoint() != a {
		t.Fatalf("joined through %s, want %s", m.Endpoint(), a)
	}
	if _, err := member.Connect(context.Background(), member.Config{Endpoint: " , "}, member.Handlers{}); err == nil {
		t.Fatal("a list of blanks was accepted")
	}
}
