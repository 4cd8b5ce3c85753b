package compute

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"

	"svc/compute/pb/cloudapi"
	"svc/compute/wire"
)

// TestTransportLimitsForClientTemplates (docs/decisions/0019-compute-members.md, transport): a member may send a message far above gRPC's 4 MiB default (bulk
// payloads of the Java and Python templates), and a client pinging every
// 10 s (the Python template pings every 15 s, the Java one every 30 s,
// grpc-go's floor is 10 s) on a stream the server sends nothing on keeps
// its stream: under the default enforcement (5 min) the pings at about
// 20, 30 and 40 s are strikes and the third ends the connection with
// GOAWAY too_many_pings (the first is forgiven after the server's greet).
func TestTransportLimitsForClientTemplates(t *testing.T) {
	t.Parallel()
	// Server keep-alive events would reset the client's ping strikes;
	// space them beyond the test so only the enforcement policy is tried.
	_, addr := startServer(t, Config{KeepaliveInterval: time.Hour, KeepaliveTimeout: time.Hour})

	big := `{"id":"big","owner":"` + strings.Repeat("x", 6<<20) + `","tags":["a"]}`
	st, _ := rawStream(t, addr, "m2m-t1")
	if err := st.Send(textEvent(wire.TypeJoin, big)); err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatalf("6 MiB join: %v %v", ev.GetType(), err)
	}

	if testing.Short() {
		t.Skip("the keep-alive half waits 45 s")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer m2m-t1"), time.Minute)
	defer cancel()
	ps, err := cloudapi.NewCloudEventsServiceClient(conn).StartStreaming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Send(textEvent(wire.TypeJoin, `{"id":"pinger","tags":["b"]}`)); err != nil {
		t.Fatal(err)
	}
	if ev, err := ps.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatalf("join: %v %v", ev.GetType(), err)
	}
	failed := make(chan error, 1)
	go func() {
		_, err := ps.Recv()
		failed <- err
	}()
	select {
	case err := <-failed:
		t.Fatalf("stream ended while the client pinged every 10 s: %v", err)
	case <-time.After(45 * time.Second):
	}
}
