package member

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"svc/platform/config"
)

func TestConfigFromComputeSettings(t *testing.T) {
	c := config.Defaults()
	c.ComputeGRPCEndpoint = "svc.internal:9090"
	c.ComputeHTTPBase = "https://svc.internal/api/"
	c.ComputeToken = "tok"
	cfg := ConfigFrom(c, "billing", "mail")
	if cfg.Endpoint != "svc.internal:9090" || strings.Join(cfg.Endpoints, ",") != "svc.internal:9090" || cfg.HTTPBase != "https://svc.internal/api" || cfg.Token != "tok" ||
		strings.Join(cfg.Tags, ",") != "billing,mail" {
		t.Fatalf("%+v", cfg)
	}
	// The list form (an extension): several cluster nodes, tried in turn.
	c.ComputeGRPCEndpoint = "n1:9090, n2:9090,,n3:9090 "
	cfg = ConfigFrom(c)
	if cfg.Endpoint != "n1:9090" || strings.Join(cfg.Endpoints, "|") != "n1:9090|n2:9090|n3:9090" {
		t.Fatalf("list form: %+v", cfg)
	}
}

func TestCallbackJoinsTransaction(t *testing.T) {
	call := &Call{TxToken: "tx-tok", httpBase: "https://svc.internal/api", token: "bearer-tok"}
	r, err := call.Callback(context.Background(), "GET", "/entity/abc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.URL.String() != "https://svc.internal/api/entity/abc" || r.Header.Get("X-Tx-Token") != "tx-tok" ||
		r.Header.Get("Authorization") != "Bearer bearer-tok" {
		t.Fatalf("%s %v", r.URL, r.Header)
	}
	if _, err := (&Call{}).Callback(context.Background(), "GET", "/x", nil); err == nil {
		t.Fatal("callback without HTTPBase accepted")
	}
	md, _ := metadata.FromOutgoingContext(call.CallbackContext(context.Background()))
	if strings.Join(md.Get("tx-token"), ",") != "tx-tok" || strings.Join(md.Get("authorization"), ",") != "Bearer bearer-tok" {
		t.Fatalf("gRPC callback metadata %v", md)
	}
	if md, ok := metadata.FromOutgoingContext((&Call{}).CallbackContext(context.Background())); ok && len(md) != 0 {
		t.Fatalf("no transaction, no token: %v", md)
	}
}

func TestConnectNeedsEndpoint(t *testing.T) {
	if _, err := Connect(context.Background(), Config{}, Handlers{}); err == nil || !strings.Contains(err.Error(), "SVC_COMPUTE_GRPC_ENDPOINT") {
		t.Fatalf("got %v", err)
	}
}
