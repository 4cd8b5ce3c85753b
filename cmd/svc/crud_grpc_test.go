package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// TestServeCrudRPCs drives the gRPC CRUD RPCs of the real binary (mock IAM
// mode, whose principal carries ROLE_M2M): a model imported and locked
// over entityModelManage, an entity created over entityManage is the one
// the HTTP API then returns.
func TestServeCrudRPCs(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	srv := startModelTestSvc(bin, t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error")
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := cloudapi.NewCloudEventsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := func(rpc func(context.Context, *ce.CloudEvent, ...grpc.CallOption) (*ce.CloudEvent, error), typ, payload string) map[string]any {
		t.Helper()
		resp, err := rpc(ctx, &ce.CloudEvent{Id: "t-" + typ, Source: "test", SpecVersion: "1.0", Type: typ,
			Data: &ce.CloudEvent_TextData{TextData: payload}})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(resp.GetTextData()), &out); err != nil || out["success"] != true {
			t.Fatalf("%s answered %s: %s", typ, resp.GetType(), resp.GetTextData())
		}
		return out
	}
	call(client.EntityModelManage, wire.TypeModelImportRequest,
		`{"id":"1","dataFormat":"JSON","converter":"SAMPLE_DATA","model":{"name":"order","version":1},"payload":{"sku":"a-1","qty":2}}`)
	call(client.EntityModelManage, wire.TypeModelTransitionRequest, `{"id":"2","model":{"name":"order","version":1},"transition":"LOCK"}`)
	out := call(client.EntityManage, wire.TypeEntityCreateRequest,
		`{"id":"3","dataFormat":"JSON","payload":{"model":{"name":"order","version":1},"data":{"sku":"z-9","qty":5}}}`)
	ids, _ := out["transactionInfo"].(map[string]any)["entityIds"].([]any)
	if len(ids) != 1 {
		t.Fatalf("create answered %v", out)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/entity/%s", httpPort, ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"z-9"`) {
		t.Fatalf("GET /entity/%s: %d %s", ids[0], resp.StatusCode, body)
	}
}
