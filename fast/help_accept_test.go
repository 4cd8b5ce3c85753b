package fast

import (
	"strings"
	"testing"

	"svc/help"
)

// TestHelpTopicAsText asks for a topic as Markdown and as plain text and
// gets the topic's own words, not JSON; JSON stays the default.
func TestHelpTopicAsText(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	tp, _ := help.Default().Get("cli")
	md := do(s, "GET", "/api/help/cli", "Accept", "text/markdown")
	if md.StatusCode() != 200 || string(md.Header.ContentType()) != "text/markdown; charset=utf-8" {
		t.Fatalf("markdown: %d %s", md.StatusCode(), md.Header.ContentType())
	}
	if body := string(md.Body()); !strings.HasPrefix(body, "# "+tp.Title+"\n\n## NAME") || !strings.Contains(body, "svc migrate") {
		t.Fatalf("markdown body starts %.80q", body)
	}
	txt := do(s, "GET", "/api/help/cli", "Accept", "text/plain")
	if txt.StatusCode() != 200 || string(txt.Header.ContentType()) != "text/plain; charset=utf-8" {
		t.Fatalf("text: %d %s", txt.StatusCode(), txt.Header.ContentType())
	}
	if body := string(txt.Body()); !strings.HasPrefix(body, tp.Title+"\n\nNAME\n") || strings.Contains(body, "```") {
		t.Fatalf("text body starts %.80q", body)
	}
	for _, accept := range []string{"", "*/*", "application/json", "text/markdown;q=0.5, application/json", "image/png"} {
		r := do(s, "GET", "/api/help/cli", "Accept", accept)
		if string(r.Header.ContentType()) != "application/json" || r.Body()[0] != '{' {
			t.Errorf("Accept %q: %s", accept, r.Header.ContentType())
		}
	}
	// Errors stay problem+json whatever was asked for.
	if r := do(s, "GET", "/api/help/no-such-topic", "Accept", "text/markdown"); r.StatusCode() != 404 ||
		string(r.Header.ContentType()) != "application/problem+json" {
		t.Fatalf("unknown topic: %d %s", r.StatusCode(), r.Header.ContentType())
	}
}

func TestNegotiateHelp(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]helpFormat{
		"":                                    helpJSON,
		"text/plain":                          helpText,
		"TEXT/Markdown":                       helpMarkdown,
		"text/*":                              helpMarkdown,
		"text/plain;q=0.4, text/markdown":     helpMarkdown,
		"text/markdown;q=0, text/plain;q=0.1": helpText,
		"text/markdown;q=0":                   helpJSON,
		"application/json, text/plain":        helpJSON,
		"text/plain;q=bogus":                  helpText,
		"image/png, text/plain;level=1":       helpText,
	} {
		if got := negotiateHelp([]byte(accept)); got != want {
			t.Errorf("%q: %d, want %d", accept, got, want)
		}
	}
}

// FuzzHelpAccept feeds arbitrary Accept headers: always a known format,
// never a panic.
func FuzzHelpAccept(f *testing.F) {
	for _, s := range []string{"", "text/plain", "text/markdown;q=0.5,*/*;q=0.1", ";;;,,,", "q=1", "text/plain;q=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		if got := negotiateHelp([]byte(accept)); got > helpText {
			t.Fatalf("%q: %d", accept, got)
		}
	})
}
