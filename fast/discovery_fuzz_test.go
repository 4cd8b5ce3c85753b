package fast

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/help"
)

// FuzzOpenAPIServerURL feeds arbitrary Host headers to /openapi.json: the
// spliced document must stay valid JSON and servers[0].url must hold only
// host characters (a plain host as sent, or the localhost fall-back), never
// anything a host smuggled in.
func FuzzOpenAPIServerURL(f *testing.F) {
	for _, h := range []string{"svc.test", "example.org:8443", "[::1]:8080", `evil"host`, `a\b`, "a<b>", "ä.example", "x\",\"y\":\"z"} {
		f.Add(h)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, host string) {
		resp := do(s, "GET", "/openapi.json", "Host", host)
		if st := resp.StatusCode(); st != 200 {
			// fasthttp builds the request URI from the Host header, so hosts
			// such as `a\b`, `#`, `%0` or `:A` change the path and miss the
			// route; that must stay a client error.
			if st < 400 || st >= 500 {
				t.Fatalf("Host %q: status %d", host, st)
			}
			return
		}
		var doc struct {
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Paths map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(resp.Body(), &doc); err != nil {
			t.Fatalf("Host %q: document is not JSON: %v", host, err)
		}
		if len(doc.Servers) != 1 || len(doc.Paths) != 71+extensionOnlyPaths() {
			t.Fatalf("Host %q: %d servers, %d paths", host, len(doc.Servers), len(doc.Paths))
		}
		// The host is what fasthttp made of the header (lower-cased,
		// userinfo dropped, ...); whatever it is, only host characters may
		// reach the URL.
		got := doc.Servers[0].URL
		mid, ok := strings.CutPrefix(got, "http://")
		mid, ok2 := strings.CutSuffix(mid, "/api")
		if !ok || !ok2 || mid == "" || !urlSafeHost([]byte(mid)) {
			t.Fatalf("Host %q: servers[0].url %q", host, got)
		}
		if urlSafeHost([]byte(host)) && host != "" && !strings.EqualFold(mid, host) && mid != "localhost" {
			t.Fatalf("Host %q: servers[0].url %q", host, got)
		}
	})
}

// FuzzHelpTopicPath sends arbitrary topic names: the answer is a topic
// (200) for exactly the valid names of existing topics, else 400 or 404
// problem+json, never a panic.
func FuzzHelpTopicPath(f *testing.F) {
	for _, n := range []string{"cli", "config.http", "", ".cli", "a/b", "errors.NO", "%00", "config..http", "../x"} {
		f.Add(n)
	}
	s := newTestServer(f)
	tree := help.Default()
	f.Fuzz(func(t *testing.T, name string) {
		resp := do(s, "GET", "/api/help/"+name)
		st := resp.StatusCode()
		switch st {
		case 200:
			var tp struct{ Topic string }
			if err := json.Unmarshal(resp.Body(), &tp); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
			if _, ok := tree.Get(tp.Topic); !ok || !help.ValidName([]byte(tp.Topic)) {
				t.Fatalf("%q: served %q", name, tp.Topic)
			}
		case 400, 404, 405:
			if string(resp.Header.ContentType()) != "application/problem+json" {
				t.Fatalf("%q: %d with %s", name, st, resp.Header.ContentType())
			}
		default:
			t.Fatalf("%q: status %d", name, st)
		}
	})
}

// FuzzDocsAsset requests arbitrary asset names with arbitrary
// If-None-Match and Accept-Encoding values.
func FuzzDocsAsset(f *testing.F) {
	f.Add("swagger-ui-bundle.js", "", "gzip")
	f.Add("init.js", `"x", *`, "")
	f.Add("../openapi.json", `W/"a"`, "br")
	f.Add("swagger-ui.css", ",,,", "gzip;q=0")
	s := newTestServer(f)
	site, err := loadDocsSite()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, inm, ae string) {
		var hdr []string
		if inm != "" {
			hdr = append(hdr, "If-None-Match", inm)
		}
		if ae != "" {
			hdr = append(hdr, "Accept-Encoding", ae)
		}
		resp := do(s, "GET", "/docs/"+name, hdr...)
		switch st := resp.StatusCode(); st {
		case 200:
			if len(resp.Body()) == 0 {
				t.Fatalf("%q: empty 200", name)
			}
		case 304:
			if len(resp.Body()) != 0 {
				t.Fatalf("%q: 304 with a body", name)
			}
		case 400, 404:
			if site.assets[name] != nil && !strings.ContainsAny(name, "/?#%") {
				t.Fatalf("%q exists but answered %d", name, st)
			}
		default:
			t.Fatalf("%q: status %d", name, st)
		}
	})
}
