package fast

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/help"
	"svc/platform/apierr"
	"svc/platform/config"
)

func errorCodeOf(t *testing.T, body []byte) string {
	t.Helper()
	props, _ := decode(t, body)["properties"].(map[string]any)
	code, _ := props["errorCode"].(string)
	return code
}

// TestHelpServedUnderContextPath fetches every topic of the index, under
// the default, an empty and a nested context path (docs/decisions/0027-discovery-and-help.md).
func TestHelpServedUnderContextPath(t *testing.T) {
	t.Parallel()
	tree := help.Default().WithVersion("9.9.9")
	for _, cp := range []string{"/api", "", "/svc/v1"} {
		cfg := config.Defaults()
		cfg.ContextPath = cp
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := New(cfg, Deps{Help: tree})
		if err != nil {
			t.Fatal(err)
		}
		resp := do(s, "GET", cp+"/help")
		if resp.StatusCode() != 200 || string(resp.Header.ContentType()) != "application/json" {
			t.Fatalf("%q: GET %s/help: %d %s", cp, cp, resp.StatusCode(), resp.Header.ContentType())
		}
		var idx struct {
			Schema  int    `json:"schema"`
			Version string `json:"version"`
			Topics  []struct {
				Topic, Title, Stability, Tagline string
				SeeAlso                          []string `json:"see_also"`
			} `json:"topics"`
		}
		if err := json.Unmarshal(resp.Body(), &idx); err != nil {
			t.Fatal(err)
		}
		if idx.Schema != 1 || idx.Version != "9.9.9" || len(idx.Topics) != len(tree.Topics) {
			t.Fatalf("%q: index schema %d version %q with %d topics", cp, idx.Schema, idx.Version, len(idx.Topics))
		}
		for _, want := range idx.Topics {
			r := do(s, "GET", cp+"/help/"+want.Topic)
			if r.StatusCode() != 200 || string(r.Header.ContentType()) != "application/json" {
				t.Errorf("%q: GET help/%s: %d %s", cp, want.Topic, r.StatusCode(), r.Header.ContentType())
				continue
			}
			var got struct {
				Topic, Title, Stability, Tagline, Body string
				SeeAlso                                []string `json:"see_also"`
			}
			if err := json.Unmarshal(r.Body(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Topic != want.Topic || got.Title != want.Title || got.Stability != want.Stability ||
				got.Tagline != want.Tagline || strings.Join(got.SeeAlso, ",") != strings.Join(want.SeeAlso, ",") || got.Body == "" {
				t.Errorf("%q: help/%s disagrees with its index entry or has no body", cp, want.Topic)
			}
		}
	}

	// Help lives under the context path only.
	s := newTestServer(t)
	for _, u := range []string{"/help", "/help/cli"} {
		if r := do(s, "GET", u); r.StatusCode() != 404 || errorCodeOf(t, r.Body()) != "NOT_FOUND" {
			t.Errorf("GET %s outside the context path: %d %s", u, r.StatusCode(), r.Body())
		}
	}
}

// TestHelpTopicNameRules applies the topic-name rule of docs/decisions/0027-discovery-and-help.md: characters A-Z a-z 0-9 . _ -,
// no leading or trailing dot or hyphen, else 400 BAD_REQUEST; a well-formed
// name that is not a topic is 404 HELP_TOPIC_NOT_FOUND.
func TestHelpTopicNameRules(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for name, want := range map[string]string{
		"":                       "BAD_REQUEST",
		".cli":                   "BAD_REQUEST",
		"cli.":                   "BAD_REQUEST",
		"-cli":                   "BAD_REQUEST",
		"cli-":                   "BAD_REQUEST",
		"config/http":            "BAD_REQUEST",
		"cl%20i":                 "BAD_REQUEST",
		"cl%C3%A9":               "BAD_REQUEST",
		"a+b":                    "BAD_REQUEST",
		"CLI":                    "HELP_TOPIC_NOT_FOUND",
		"config..http":           "HELP_TOPIC_NOT_FOUND",
		"no_such.topic":          "HELP_TOPIC_NOT_FOUND",
		"errors.NO_SUCH_CODE":    "HELP_TOPIC_NOT_FOUND",
		"auth.trusted-keys":      "",
		"errors.MODEL_NOT_FOUND": "",
		"_x":                     "HELP_TOPIC_NOT_FOUND",
	} {
		r := do(s, "GET", "/api/help/"+name)
		switch want {
		case "":
			if r.StatusCode() != 200 {
				t.Errorf("%q: %d, want 200", name, r.StatusCode())
			}
		case "BAD_REQUEST":
			if r.StatusCode() != 400 || errorCodeOf(t, r.Body()) != want {
				t.Errorf("%q: %d %s, want 400 BAD_REQUEST", name, r.StatusCode(), r.Body())
			}
		default:
			if r.StatusCode() != 404 || errorCodeOf(t, r.Body()) != want {
				t.Errorf("%q: %d %s, want 404 %s", name, r.StatusCode(), r.Body(), want)
				continue
			}
			props := decode(t, r.Body())["properties"].(map[string]any)
			if props["topic"] != name {
				t.Errorf("%q: properties.topic %v", name, props["topic"])
			}
		}
		if want != "" && string(r.Header.ContentType()) != "application/problem+json" {
			t.Errorf("%q: Content-Type %s", name, r.Header.ContentType())
		}
	}
}

func TestHelpOnlyAnswersGet(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, u := range []string{"/api/help", "/api/help/cli"} {
		for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			r := do(s, m, u)
			if r.StatusCode() != 405 || !strings.Contains(string(r.Header.Peek("Allow")), "GET") {
				t.Errorf("%s %s: %d, Allow %q", m, u, r.StatusCode(), r.Header.Peek("Allow"))
			}
		}
	}
}

var topicStatus = regexp.MustCompile(`(?m)^## STATUS\s+(\d{3}) `)

// TestCatalogueCodesHaveTopics checks each code of the error catalogue
// has its errors.<CODE> topic and that the topic states the status the
// catalogue gives the code (the transport variants of BAD_REQUEST share
// the plain one's topic, which names their statuses in its text).
func TestCatalogueCodesHaveTopics(t *testing.T) {
	t.Parallel()
	tree := help.Default()
	seen := map[string]bool{}
	for _, c := range apierr.Catalogue() {
		code, status := c.String(), c.HTTPStatus()
		if seen[code] {
			continue
		}
		seen[code] = true
		tp, ok := tree.Get(c.Topic())
		if !ok {
			t.Errorf("%s: no topic errors.%s", code, code)
			continue
		}
		m := topicStatus.FindStringSubmatch(tp.Body)
		if m == nil {
			t.Errorf("errors.%s: STATUS section does not start with a status code", code)
			continue
		}
		if m[1] != strconv.Itoa(status) {
			t.Errorf("errors.%s: topic says %s, the catalogue %d", code, m[1], status)
		}
	}
}
