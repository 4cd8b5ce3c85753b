package search_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"svc/compute"
	"svc/compute/member"
	"svc/iam"
	"svc/search"
	"svc/workflow"
)

// The search tests run function conditions against a real compute member
// over loopback gRPC; the server lives here because compute imports search.
func init() {
	search.StartMemberForTest = func(tb testing.TB, tenant string, h func(context.Context, *member.Call) (bool, string, error), set func(workflow.CriteriaDispatcher)) {
		tb.Helper()
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		srv := compute.New(compute.Config{}, compute.MockVerifier{Principal: &iam.Principal{Kind: "service", UserID: "m",
			TenantID: tenant, Roles: []string{iam.RoleM2M}}}, slog.New(slog.DiscardHandler))
		srv.Start(lis, nil)
		tb.Cleanup(srv.Stop)
		set(srv)
		m, err := member.Connect(context.Background(), member.Config{Endpoint: lis.Addr().String(), Tags: []string{"calc"},
			Log: slog.New(slog.DiscardHandler)}, member.Handlers{Criteria: h})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { m.Close() })
	}
}
