//go:build unix

package fast

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/platform/config"
)

// browserTimeout bounds one headless Chromium run; the page itself gets a
// virtual-time budget of 15 s.
const browserTimeout = 2 * time.Minute

// findChromium returns Debian's headless-capable browser, or "" when none
// is installed.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// dumpDOM loads url in headless Chromium and returns the DOM after the
// page's scripts ran. The browser runs in its own process group, which is
// killed when the run ends or times out, so no helper process outlives the
// test.
func dumpDOM(t *testing.T, chromium, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=15000", "--dump-dom", url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Helpers that inherited stdout must not keep Wait blocked.
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium did not finish within %s\nstderr:\n%s", browserTimeout, tail(stderr.Bytes(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium: %v\nstderr:\n%s", err, tail(stderr.Bytes(), 2000))
	}
	return stdout.Bytes()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

var (
	renderedOpPath = regexp.MustCompile(`class="opblock-summary-path"[^>]*data-path="([^"]*)"`)
	renderedServer = regexp.MustCompile(`<option value="([^"]*)"`)
)

// TestDocsPageRendersInBrowser serves svc on loopback and renders /docs in
// headless Chromium: Swagger UI must load from svc (the page's CSP forbids
// anything else), fetch /openapi.json and list the operations.
//
// Chromium comes from scripts/test-deps.sh (Debian's package). Without it
// the test fails, unless SVC_SKIP_BROWSER_TEST=1 says to skip it.
func TestDocsPageRendersInBrowser(t *testing.T) {
	t.Parallel()
	if os.Getenv("SVC_SKIP_BROWSER_TEST") == "1" {
		t.Skip("SVC_SKIP_BROWSER_TEST=1")
	}
	chromium := findChromium()
	if chromium == "" {
		t.Fatal("chromium is not installed: run scripts/test-deps.sh (apt-get install chromium), or set SVC_SKIP_BROWSER_TEST=1 to skip this test")
	}
	if testing.Short() {
		t.Skip("-short: headless browser run skipped")
	}

	s := newTestServer(t, func(c *config.Config) { c.ContextPath = "/svc" })
	base, stop := serveLoopback(t, s)
	defer stop()

	dom := dumpDOM(t, chromium, base+"/docs")

	paths := map[string]bool{}
	for _, m := range renderedOpPath.FindAllSubmatch(dom, -1) {
		paths[string(m[1])] = true
	}
	if !paths["/oauth/token"] {
		t.Errorf("the rendered page does not list POST /oauth/token; %d operation paths rendered\n%s", len(paths), tail(dom, 3000))
	}
	want := map[string]bool{}
	for _, r := range s.Routes() {
		want[r.Path] = true
	}
	for p := range want {
		if !paths[p] {
			t.Errorf("path %s not rendered", p)
		}
	}
	for p := range paths {
		if !want[p] {
			t.Errorf("rendered path %s is not a route", p)
		}
	}

	// The server list shows the URL svc spliced in for this request.
	servers := renderedServer.FindAllSubmatch(dom, -1)
	if len(servers) != 1 || string(servers[0][1]) != base+"/svc" {
		var got []string
		for _, m := range servers {
			got = append(got, string(m[1]))
		}
		t.Errorf("rendered servers %q, want [%s/svc]", got, base)
	}
	if strings.Contains(string(dom), "Failed to load API definition") {
		t.Error("Swagger UI reports that it failed to load /openapi.json")
	}
}
