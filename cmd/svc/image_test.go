package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"svc/internal/await"
	"svc/storage/pgtest"
)

// TestContainerImage builds the container image and runs it (issue 26 item
// 7): a static binary (CGO off, as the Dockerfile builds it; the SQLite
// engine is pure Go) in an image FROM scratch with the Dockerfile's final
// stage settings (user, environment, entrypoint, command), committed to a
// private buildah/podman store and run with podman on the host network
// against this machine's PostgreSQL. No registry is reachable here, so
// nothing is pulled: scratch is buildah's empty image, and the CA bundle
// the distroless base would bring is copied from this machine.
//
// It checks that `svc version` in the image prints the stamped version and
// commit, that the image's default mock mode refuses to start on its
// network-facing bind addresses unless SVC_IAM_MODE=mock is said, and that
// with it svc migrates the database, answers /readyz 200 and stops on
// SIGTERM with exit code 0.
//
// It needs Debian's buildah, podman and runc (`make test-deps` installs
// them) and skips, saying why, without them or where the machine cannot run
// containers at all.
func TestContainerImage(t *testing.T) {
	// Parallel: its image store, containers and ports are its own (see
	// the private store below), and it waits on buildah and podman.
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the image test builds a binary and runs a container")
	}
	for _, tool := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test-deps installs buildah, podman and runc from Debian's packages): %v", tool, err)
		}
	}
	dir, err := os.MkdirTemp("", "svc-image")
	if err != nil {
		t.Fatal(err)
	}
	// A private store: vfs (no overlay mounts needed), cgroupfs and file
	// events (no systemd), so parallel runs and other users of the
	// machine's podman never see these images.
	store := []string{"--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"}
	pod := append([]string{"--tmpdir", filepath.Join(dir, "libpod"), "--cgroup-manager", "cgroupfs", "--events-backend", "file"}, store...)
	// crun refuses the hybrid cgroup layout of machines whose cgroup v2
	// hierarchy holds a controller; runc runs there.
	if _, err := exec.LookPath("runc"); err == nil {
		pod = append(pod, "--runtime", "runc")
	}
	// Bounds the container commands only (the binary is built first).
	var ctx context.Context
	run := func(tool string, args ...string) (string, error) {
		global := store
		if tool == "podman" {
			global = pod
		}
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, tool, append(append([]string{}, global...), args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return strings.TrimSpace(out.String()), err
	}
	must := func(tool string, args ...string) string {
		t.Helper()
		out, err := run(tool, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
		}
		return out
	}
	t.Cleanup(func() {
		// Containers and images first, then the store's files, under a
		// bound of their own (the test's has ended).
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer ccancel()
		ctx = cctx
		run("podman", "rm", "--all", "--force")
		run("podman", "rmi", "--all", "--force")
		run("buildah", "rm", "--all")
		if os.Geteuid() == 0 {
			os.RemoveAll(dir)
		} else {
			// A rootless store holds files of mapped ids.
			exec.Command("podman", "unshare", "rm", "-rf", dir).Run()
			os.RemoveAll(dir)
		}
	})

	// The binary the other tests run: static (CGO off) as the Dockerfile
	// builds it, stamped with -X main.version and main.commit.
	bin := svcBinary(t)
	tctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ctx = tctx
	if f, err := elf.Open(bin); err != nil {
		t.Fatal(err)
	} else {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the binary is dynamically linked; the image has no libc")
			}
		}
		f.Close()
	}

	final := dockerfileFinalStage(t)
	ctr := must("buildah", "from", "--name", "svc-image-test", "scratch")
	must("buildah", "copy", "--chmod", "0755", ctr, bin, "/svc")
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		must("buildah", "copy", ctr, "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt")
	}
	cfg := []string{"config", "--entrypoint", final.entrypoint, "--cmd", final.cmd, "--user", final.user}
	for _, kv := range final.env {
		cfg = append(cfg, "--env", kv)
	}
	must("buildah", append(cfg, ctr)...)
	const image = "localhost/svc-image-test:latest"
	must("buildah", "commit", "--rm", ctr, image)

	// `svc version` in the image: the stamp of the build.
	out, err := run("podman", append(append([]string{"run", "--rm", "--network", "host"}, ulimits()...), image, "version")...)
	if err != nil {
		if cannotRunContainers.MatchString(out) {
			t.Skipf("this machine cannot run containers (the image was built): podman run: %v: %s", err, out)
		}
		t.Fatalf("podman run version: %v\n%s", err, out)
	}
	if want := "svc version 9.9.9-test (commit abc123, built unknown)"; out != want {
		t.Errorf("svc version in the image printed %q, want %q", out, want)
	}

	dbURL := pgtest.New(t, "image")
	httpPort, grpcPort, adminPort := freePort(t), freePort(t), freePort(t)
	env := append(append([]string{"run", "--network", "host"}, ulimits()...),
		"-e", "SVC_STORAGE_BACKEND=postgres", "-e", "SVC_POSTGRES_URL="+dbURL,
		"-e", fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), "-e", fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort),
		"-e", fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), "-e", "SVC_SUPPRESS_BANNER=true")

	// The image binds every interface, so its default mock mode refuses
	// to start until told.
	out, err = run("podman", append(append(env, "--rm"), image)...)
	if err == nil || !strings.Contains(out, "SVC_IAM_MODE") {
		t.Errorf("the image started in implicit mock mode on every interface: err %v\n%s", err, out)
	}

	name := "svc-image-test-run"
	must("podman", append(env, "-d", "--name", name, "-e", "SVC_IAM_MODE=mock", image)...)
	if !await.Poll(60*time.Second, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", adminPort))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		if state, _ := run("podman", "inspect", "--format", "{{.State.Status}}", name); state == "exited" {
			logs, _ := run("podman", "logs", name)
			t.Fatalf("the container exited before /readyz answered 200:\n%s", logs)
		}
		return false
	}) {
		logs, _ := run("podman", "logs", name)
		t.Fatalf("/readyz of the container did not answer 200 within 60s:\n%s", logs)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/help", httpPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/help from the container: %d", resp.StatusCode)
	}
	must("podman", "stop", "--time", "60", name)
	if code := must("podman", "inspect", "--format", "{{.State.ExitCode}}", name); code != "0" {
		logs, _ := run("podman", "logs", name)
		t.Errorf("svc in the container exited %s on SIGTERM, want 0:\n%s", code, logs)
	}
	must("podman", "rm", name)
	must("podman", "rmi", image)
}

// cannotRunContainers matches the OCI runtime's refusals of a sandbox that
// lacks the privileges containers need (rlimits, cgroups, namespaces);
// anything else from podman run is a failure.
var cannotRunContainers = regexp.MustCompile(`OCI permission denied|cgroups in hybrid mode|(unshare|clone|mount).*operation not permitted|user namespaces? (are )?not (enabled|supported)`)

// ulimits gives the container this process's open-files limit and 4096
// processes (threads) per user: the OCI runtime raises both to podman's
// defaults otherwise, which an unprivileged sandbox refuses (setrlimit:
// operation not permitted; this machine refuses process limits above
// 32768 even below its own).
func ulimits() []string {
	n := 1024
	if b, err := os.ReadFile("/proc/self/limits"); err == nil {
		if m := regexp.MustCompile(`(?m)^Max open files\s+(\d+)`).FindSubmatch(b); m != nil {
			fmt.Sscan(string(m[1]), &n)
		}
	}
	return []string{fmt.Sprintf("--ulimit=nofile=%d:%d", n, n), "--ulimit=nproc=4096:4096"}
}

// finalStage is the runtime configuration of the Dockerfile's last stage.
type finalStage struct {
	user, entrypoint, cmd string
	env                   []string
}

// dockerfileFinalStage reads USER, ENV, ENTRYPOINT and CMD of the
// Dockerfile's last stage, so the test's image runs as the real one does.
func dockerfileFinalStage(t *testing.T) finalStage {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var st finalStage
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "FROM":
			st = finalStage{}
		case "USER":
			st.user = rest
		case "ENTRYPOINT":
			st.entrypoint = rest
		case "CMD":
			st.cmd = rest
		case "ENV":
			st.env = append(st.env, strings.Fields(rest)...)
		}
	}
	if st.user == "" || st.entrypoint == "" || st.cmd == "" || len(st.env) == 0 {
		t.Fatalf("the Dockerfile's last stage lacks USER, ENTRYPOINT, CMD or ENV: %+v", st)
	}
	return st
}
