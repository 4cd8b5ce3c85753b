package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/compute/member"
)

// TestServeComputeMemberJoins starts the real binary in mock IAM mode and
// connects svc's own compute-member client over loopback gRPC on
// SVC_GRPC_PORT: the member is greeted with an id. On SIGTERM the process
// drains, ends the member's stream and exits 0.
func TestServeComputeMemberJoins(t *testing.T) {
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = cleanEnv(t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true")
	var stderr, stdout syncBuffer
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitReady(t, adminPort)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := member.Connect(ctx, member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Tags: []string{"calc"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{})
	if err != nil {
		t.Fatalf("member join: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	defer m.Close()
	if m.ID() == "" {
		t.Fatal("greet carried no member id")
	}
	if !strings.Contains(stdout.String(), "compute gRPC listening") {
		t.Errorf("no gRPC listening log line:\n%s", stdout.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("member stream still open after SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestServeRefusesABusyGRPCPort: a taken SVC_GRPC_PORT is a startup error
// naming the variable, exit code 1.
func TestServeRefusesABusyGRPCPort(t *testing.T) {
	bin := svcBinary(t)
	busy, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = cleanEnv(t, fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)), fmt.Sprintf("SVC_ADMIN_PORT=%d", freePort(t)),
		fmt.Sprintf("SVC_GRPC_PORT=%d", busy.Addr().(*net.TCPAddr).Port), "SVC_SUPPRESS_BANNER=true")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve with a busy gRPC port: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "SVC_GRPC_PORT") {
		t.Fatalf("stderr does not name SVC_GRPC_PORT: %q", stderr.String())
	}
}
