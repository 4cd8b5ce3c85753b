package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDeployArtefacts checks what the Dockerfile and the compose file
// promise (issue 16 item 7): a multi-stage build of a static binary, a
// non-root user, the three ports, `svc health` as the health check, and
// three cluster nodes with PostgreSQL and a load balancer. No registry is
// reachable here, so the Dockerfile itself is not built; TestContainerImage
// builds and runs its final stage around the same static binary
// (`svc help cluster` says so).
func TestDeployArtefacts(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := string(df)
	if n := len(regexp.MustCompile(`(?m)^FROM `).FindAllString(d, -1)); n < 2 {
		t.Errorf("Dockerfile has %d stages, want a multi-stage build", n)
	}
	// The build stamps what `svc version` prints (issue 26: the image
	// said "dev (commit unknown)").
	for _, want := range []string{"ARG VERSION", "ARG COMMIT", "ARG BUILD_DATE", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "-X main.buildDate=${BUILD_DATE}"} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "--build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg BUILD_DATE=$(BUILD_DATE)") {
		t.Error("make image does not pass the build stamp")
	}
	for _, want := range []string{"CGO_ENABLED=0", "COPY --from=build", "USER 65532:65532", `CMD ["/svc", "health"]`, `ENTRYPOINT ["/svc"]`} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^EXPOSE (.*)$`).FindStringSubmatch(d); m == nil ||
		!strings.Contains(m[1], "8080") || !strings.Contains(m[1], "9090") || !strings.Contains(m[1], "9091") {
		t.Errorf("Dockerfile EXPOSE: %v", m)
	}
	if regexp.MustCompile(`(?m)^USER (root|0)\b`).MatchString(d) {
		t.Error("Dockerfile runs as root")
	}

	cf, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := string(cf)
	for _, want := range []string{"  svc-1:", "  svc-2:", "  svc-3:", "  postgres:", "  lb:", "SVC_CLUSTER_ENABLED: \"true\"",
		"SVC_SEED_NODES: svc-1:7946,svc-2:7946,svc-3:7946", "SVC_IAM_MODE: mock", "./nginx.conf:/etc/nginx/nginx.conf"} {
		if !strings.Contains(c, want) {
			t.Errorf("compose.yaml lacks %q", want)
		}
	}
	ng, err := os.ReadFile("../../deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server svc-1:8080", "server svc-2:8080", "server svc-3:8080", "grpc_pass"} {
		if !strings.Contains(string(ng), want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
}
