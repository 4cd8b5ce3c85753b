// Package help is svc's help topic tree: Markdown topics with front matter,
// embedded in the binary, served at {ctx}/help and by `svc help`.
package help

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
	"go.yaml.in/yaml/v3"
)

//go:embed topics
var content embed.FS

// Topic is one help topic (docs/decisions/0027-discovery-and-help.md).
type Topic struct {
	Topic     string   `json:"topic"`
	Title     string   `json:"title"`
	Stability string   `json:"stability"`
	Tagline   string   `json:"tagline"`
	SeeAlso   []string `json:"see_also"`
	Body      string   `json:"body,omitempty"`

	// JSON is the single-topic response, rendered once at load.
	JSON []byte `json:"-"`
	// Markdown (the title as a heading, then the body) and Text (the
	// terminal rendering of `svc help <topic>`) are the responses for
	// Accept: text/markdown and text/plain, rendered once at load.
	Markdown []byte `json:"-"`
	Text     []byte `json:"-"`
}

// Tree is the loaded topic set, depth-first with parents first.
type Tree struct {
	Topics []*Topic
	byName map[string]*Topic
	index  []byte
}

type frontMatter struct {
	Topic     string   `yaml:"topic"`
	Title     string   `yaml:"title"`
	Stability string   `yaml:"stability"`
	Tagline   string   `yaml:"tagline"`
	SeeAlso   []string `yaml:"see_also"`
}

// defaultTree loads the embedded tree once, whichever goroutine asks
// first: servers built concurrently (parallel tests) share it.
var defaultTree = sync.OnceValue(func() *Tree {
	t, err := Load(content, "topics", "dev")
	if err != nil {
		panic(err)
	}
	return t
})

// Default is the embedded tree. Malformed content panics at first use, and
// the tests load it, so it cannot ship.
func Default() *Tree {
	return defaultTree()
}

// WithVersion returns the tree whose index reports version.
func (t *Tree) WithVersion(version string) *Tree {
	c := *t
	c.index = renderIndex(t.Topics, version)
	return &c
}

// Load reads every .md file under root of fsys. The file path gives the
// topic (`config/http.md` is `config.http`); the front matter must agree.
func Load(fsys fs.FS, root, version string) (*Tree, error) {
	t := &Tree{byName: map[string]*Topic{}}
	err := fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		raw, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, root+"/"), ".md")
		name := strings.ReplaceAll(rel, "/", ".")
		tp, err := parseTopic(raw)
		if err != nil {
			return fmt.Errorf("help topic %s: %w", path, err)
		}
		if tp.Topic != name {
			return fmt.Errorf("help topic %s: front matter says %q, path says %q", path, tp.Topic, name)
		}
		t.byName[name] = tp
		t.Topics = append(t.Topics, tp)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(t.Topics, func(i, j int) bool { return topicLess(t.Topics[i].Topic, t.Topics[j].Topic) })
	for _, tp := range t.Topics {
		if i := strings.LastIndexByte(tp.Topic, '.'); i > 0 {
			if _, ok := t.byName[tp.Topic[:i]]; !ok {
				return nil, fmt.Errorf("help topic %s: parent %s is missing", tp.Topic, tp.Topic[:i])
			}
		}
		b, err := json.Marshal(tp)
		if err != nil {
			return nil, err
		}
		tp.JSON = b
		tp.Markdown = []byte("# " + tp.Title + "\n\n" + strings.TrimSpace(tp.Body) + "\n")
		var txt strings.Builder
		if err := t.WriteText(&txt, tp); err != nil {
			return nil, err
		}
		tp.Text = []byte(txt.String())
	}
	t.index = renderIndex(t.Topics, version)
	return t, nil
}

// topicLess orders depth-first, parents before children, siblings by byte
// order of their segments.
func topicLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

func renderIndex(topics []*Topic, version string) []byte {
	type item struct {
		Topic     string   `json:"topic"`
		Title     string   `json:"title"`
		Stability string   `json:"stability"`
		Tagline   string   `json:"tagline"`
		SeeAlso   []string `json:"see_also"`
	}
	out := struct {
		Schema  int    `json:"schema"`
		Version string `json:"version"`
		Topics  []item `json:"topics"`
	}{Schema: 1, Version: version}
	for _, tp := range topics {
		out.Topics = append(out.Topics, item{tp.Topic, tp.Title, tp.Stability, tp.Tagline, tp.SeeAlso})
	}
	b, _ := json.Marshal(out)
	return b
}

var stabilities = map[string]bool{"stable": true, "evolving": true, "experimental": true}

func parseTopic(raw []byte) (*Topic, error) {
	if !bytes.HasPrefix(raw, []byte("---\n")) {
		return nil, fmt.Errorf("missing front matter")
	}
	end := bytes.Index(raw[4:], []byte("\n---\n"))
	if end < 0 {
		return nil, fmt.Errorf("unterminated front matter")
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader(raw[4 : 4+end]))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	body := strings.TrimSpace(string(raw[4+end+5:]))
	switch {
	case fm.Topic == "":
		return nil, fmt.Errorf("front matter lacks topic")
	case fm.Title == "":
		return nil, fmt.Errorf("front matter lacks title")
	case !stabilities[fm.Stability]:
		return nil, fmt.Errorf("stability %q is not stable, evolving or experimental", fm.Stability)
	}
	tp := &Topic{Topic: fm.Topic, Title: fm.Title, Stability: fm.Stability, SeeAlso: fm.SeeAlso, Body: body}
	if tp.SeeAlso == nil {
		tp.SeeAlso = []string{}
	}
	tp.Tagline = fm.Tagline
	if tp.Tagline == "" {
		tp.Tagline = deriveTagline(fm.Topic, body)
	}
	return tp, nil
}

var inlineMarks = regexp.MustCompile("[`*_]|\\[([^\\]]*)\\]\\([^)]*\\)")

// deriveTagline takes the first paragraph of the NAME section (or the first
// paragraph), strips a leading "<topic> — ", inline markup and extra space,
// and cuts it to 80 runes.
func deriveTagline(topic, body string) string {
	para := ""
	if i := strings.Index(body, "## NAME"); i >= 0 {
		para = firstParagraph(body[i+len("## NAME"):])
	}
	if para == "" {
		para = firstParagraph(body)
	}
	for _, sep := range []string{" — ", " - "} {
		para = strings.TrimPrefix(para, topic+sep)
	}
	para = inlineMarks.ReplaceAllString(para, "$1")
	para = strings.Join(strings.Fields(para), " ")
	if r := []rune(para); len(r) > 80 {
		para = string(r[:79]) + "…"
	}
	return para
}

func firstParagraph(s string) string {
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		p = strings.TrimSpace(p)
		if p != "" && !strings.HasPrefix(p, "#") {
			return p
		}
	}
	return ""
}

// Get returns a topic by its dotted name.
func (t *Tree) Get(name string) (*Topic, bool) {
	tp, ok := t.byName[name]
	return tp, ok
}

// GetBytes is Get for a name held in a byte slice, without allocating.
func (t *Tree) GetBytes(name []byte) (*Topic, bool) {
	tp, ok := t.byName[string(name)]
	return tp, ok
}

// IndexJSON is the {ctx}/help response.
func (t *Tree) IndexJSON() []byte { return t.index }

// ValidName applies the topic-name rule of docs/decisions/0027-discovery-and-help.md: characters A-Z a-z 0-9 . _ - only, no leading
// or trailing dot or hyphen.
func ValidName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	first, last := name[0], name[len(name)-1]
	return first != '.' && first != '-' && last != '.' && last != '-'
}
