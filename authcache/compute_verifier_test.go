package authcache

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/compute"
	"svc/compute/member"
)

// TestComputeVerifierOverGRPC runs compute's gRPC server with the jwt
// verifier on loopback and joins members with real RS256 tokens: ROLE_M2M
// joins in its token's tenant, other roles are PermissionDenied, and a
// missing, forged or expired token is Unauthenticated.
func TestComputeVerifierOverGRPC(t *testing.T) {
	f := newFixture(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := compute.New(compute.Config{}, &TokenVerifier{C: f.cache, Log: log}, log)
	srv.Start(lis, nil)
	t.Cleanup(srv.Stop)
	join := func(token string) (*member.Member, error) {
		return member.Connect(context.Background(), member.Config{Endpoint: lis.Addr().String(), Token: token,
			Tags: []string{"calc"}, JoinTimeout: 5 * time.Second, Log: log}, member.Handlers{})
	}

	m2m := f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) { c["user_roles"] = []string{"ROLE_M2M"} })
	m, err := join(m2m)
	if err != nil {
		t.Fatalf("M2M member: %v", err)
	}
	defer m.Close()
	if m.ID() == "" || srv.Members("t1") != 1 || srv.Members("t2") != 0 {
		t.Fatalf("member %q joined; t1 has %d, t2 has %d", m.ID(), srv.Members("t1"), srv.Members("t2"))
	}

	for name, tc := range map[string]struct {
		token string
		code  codes.Code
	}{
		"no ROLE_M2M": {f.mint(t, f.keys.BootstrapKID(), nil), codes.PermissionDenied},
		"no token":    {"", codes.Unauthenticated},
		"forged":      {m2m[:len(m2m)-4] + "AAAA", codes.Unauthenticated},
		"expired": {f.mint(t, f.keys.BootstrapKID(), func(c jwt.MapClaims) {
			c["user_roles"] = []string{"ROLE_M2M"}
			c["exp"] = time.Now().Add(-time.Hour).Unix()
		}), codes.Unauthenticated},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := join(tc.token)
			if err == nil {
				m.Close()
				t.Fatal("joined")
			}
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v (%v), want %v", got, err, tc.code)
			}
		})
	}
	if srv.Members("t1") != 1 {
		t.Fatalf("rejected joins registered members: %d", srv.Members("t1"))
	}
}
