package fast

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"svc/platform/config"
)

var pageRefs = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// TestDocsPageLoadsOnlyOwnAssets checks that the page refers to nothing
// outside svc and that every file it names is served with its type.
func TestDocsPageLoadsOnlyOwnAssets(t *testing.T) {
	t.Parallel()
	for _, cp := range []string{"/api", ""} {
		s := newTestServer(t, func(c *config.Config) { c.ContextPath = cp })
		resp := do(s, "GET", "/docs")
		if resp.StatusCode() != 200 || string(resp.Header.ContentType()) != "text/html; charset=utf-8" {
			t.Fatalf("context path %q: GET /docs: %d %s", cp, resp.StatusCode(), resp.Header.ContentType())
		}
		csp := string(resp.Header.Peek("Content-Security-Policy"))
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("Content-Security-Policy %q does not hold the page to its own origin", csp)
		}
		page := string(resp.Body())
		refs := pageRefs.FindAllStringSubmatch(page, -1)
		var scripts int
		for _, m := range refs {
			u := m[1]
			if u == "/openapi.json" {
				continue
			}
			if !strings.HasPrefix(u, "/docs/") {
				t.Errorf("page refers to %q, outside svc's /docs/", u)
				continue
			}
			a := do(s, "GET", u)
			if a.StatusCode() != 200 || len(a.Body()) == 0 {
				t.Errorf("GET %s: %d, %d bytes", u, a.StatusCode(), len(a.Body()))
			}
			ct := string(a.Header.ContentType())
			switch {
			case strings.Contains(u, ".js?"):
				scripts++
				if ct != "text/javascript; charset=utf-8" {
					t.Errorf("%s: Content-Type %s", u, ct)
				}
			case strings.Contains(u, ".css?") && ct != "text/css; charset=utf-8",
				strings.Contains(u, ".png?") && ct != "image/png":
				t.Errorf("%s: Content-Type %s", u, ct)
			}
		}
		if scripts != 2 {
			t.Errorf("page loads %d scripts, want Swagger UI and init.js: %v", scripts, refs)
		}
		init := do(s, "GET", "/docs/init.js")
		if !bytes.Contains(init.Body(), []byte(`url: "/openapi.json"`)) {
			t.Errorf("init.js does not load /openapi.json:\n%s", init.Body())
		}
	}
}

func TestDocsAssetEncodingAndCaching(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	plain := do(s, "GET", "/docs/swagger-ui-bundle.js")
	if plain.StatusCode() != 200 || len(plain.Header.Peek("Content-Encoding")) != 0 {
		t.Fatalf("without Accept-Encoding: %d, Content-Encoding %q", plain.StatusCode(), plain.Header.Peek("Content-Encoding"))
	}
	if !bytes.Contains(plain.Body(), []byte("SwaggerUIBundle")) {
		t.Error("the plain bundle does not define SwaggerUIBundle")
	}
	gz := do(s, "GET", "/docs/swagger-ui-bundle.js", "Accept-Encoding", "br, gzip")
	if string(gz.Header.Peek("Content-Encoding")) != "gzip" {
		t.Fatalf("with Accept-Encoding gzip: Content-Encoding %q", gz.Header.Peek("Content-Encoding"))
	}
	inflated, err := gunzip(gz.Body())
	if err != nil || !bytes.Equal(inflated, plain.Body()) {
		t.Errorf("gzip body does not inflate to the plain one (err %v)", err)
	}
	if len(gz.Body()) >= len(plain.Body()) {
		t.Errorf("gzip body %d bytes, plain %d", len(gz.Body()), len(plain.Body()))
	}

	etag := string(plain.Header.Peek("ETag"))
	if etag == "" || etag != string(gz.Header.Peek("ETag")) {
		t.Fatalf("ETag %q / %q", etag, gz.Header.Peek("ETag"))
	}
	if v := string(plain.Header.Peek("Vary")); v != "Accept-Encoding" {
		t.Errorf("Vary %q", v)
	}
	for inm, want := range map[string]int{etag: 304, `"x", ` + etag: 304, "W/" + etag: 304, `"other"`: 200} {
		if got := do(s, "GET", "/docs/swagger-ui-bundle.js", "If-None-Match", inm).StatusCode(); got != want {
			t.Errorf("If-None-Match %s: %d, want %d", inm, got, want)
		}
	}
}

func TestDocsUnknownAssetIs404(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, u := range []string{"/docs/nope.js", "/docs/", "/docs/swagger-ui-bundle.js.gz", "/docs/..%2Fopenapi.json", "/docs/a/b"} {
		resp := do(s, "GET", u)
		if resp.StatusCode() != 404 || string(resp.Header.ContentType()) != "application/problem+json" {
			t.Errorf("GET %s: %d %s, want 404 problem+json", u, resp.StatusCode(), resp.Header.ContentType())
		}
	}
	if got := do(s, "POST", "/docs").StatusCode(); got != 405 {
		t.Errorf("POST /docs: %d, want 405", got)
	}
}

// TestDocsEmbeddedAssetsInflate reads every embedded file the way a client
// without gzip gets it.
func TestDocsEmbeddedAssetsInflate(t *testing.T) {
	t.Parallel()
	site, err := loadDocsSite()
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range site.assets {
		if !a.gzipped {
			continue
		}
		if b, err := gunzip(a.body); err != nil || len(b) == 0 {
			t.Errorf("%s: %d bytes, %v", name, len(b), err)
		}
	}
}
