package help

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Find resolves what a person typed: the words of `svc help config http`
// are joined with dots, slashes count as dots, and when no topic has that
// exact name a case-insensitive match is accepted (`errors.model_not_found`).
func (t *Tree) Find(words ...string) (*Topic, bool) {
	parts := make([]string, 0, len(words))
	for _, w := range words {
		parts = append(parts, strings.FieldsFunc(w, func(r rune) bool { return r == '.' || r == '/' })...)
	}
	name := strings.Join(parts, ".")
	if name == "" {
		return nil, false
	}
	if tp, ok := t.byName[name]; ok {
		return tp, true
	}
	for _, tp := range t.Topics {
		if strings.EqualFold(tp.Topic, name) {
			return tp, true
		}
	}
	return nil, false
}

// Children returns the direct subtopics of name in tree order.
func (t *Tree) Children(name string) []*Topic {
	var out []*Topic
	prefix := name + "."
	for _, tp := range t.Topics {
		if strings.HasPrefix(tp.Topic, prefix) && !strings.Contains(tp.Topic[len(prefix):], ".") {
			out = append(out, tp)
		}
	}
	return out
}

// WriteIndex lists every topic with its tagline, one per line, for a
// terminal.
func (t *Tree) WriteIndex(w io.Writer) error {
	width := 0
	for _, tp := range t.Topics {
		if n := utf8.RuneCountInString(tp.Topic); n > width {
			width = n
		}
	}
	var b strings.Builder
	b.WriteString("svc help topics; `svc help <topic>` shows one (`svc help config http` or `svc help config.http`):\n\n")
	for _, tp := range t.Topics {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, tp.Topic, tp.Tagline)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText renders one topic for a terminal: the title, the body with
// `## ` headings turned into flush-left upper-case headings and the text
// indented under them, code blocks indented further, code spans kept, and
// finally the list of subtopics.
func (t *Tree) WriteText(w io.Writer, tp *Topic) error {
	var b strings.Builder
	b.WriteString(tp.Title)
	b.WriteString("\n\n")
	b.WriteString(RenderText(tp.Body))
	if kids := t.Children(tp.Topic); len(kids) > 0 {
		width := 0
		for _, k := range kids {
			if n := utf8.RuneCountInString(k.Topic); n > width {
				width = n
			}
		}
		b.WriteString("\nSUBTOPICS\n")
		for _, k := range kids {
			fmt.Fprintf(&b, "    %-*s  %s\n", width, k.Topic, k.Tagline)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var (
	boldMarks = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	mdLink    = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)
)

// RenderText turns a topic body (the Markdown subset the topics use) into
// plain text for a terminal.
func RenderText(body string) string {
	var b strings.Builder
	inCode := false
	blank := false
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			b.WriteString("        ")
			b.WriteString(strings.TrimRight(line, " \t"))
			b.WriteByte('\n')
			blank = false
			continue
		}
		if trimmed == "" {
			if !blank {
				b.WriteByte('\n')
			}
			blank = true
			continue
		}
		blank = false
		switch {
		case strings.HasPrefix(line, "## "):
			b.WriteString(strings.ToUpper(strings.TrimSpace(line[3:])))
		case strings.HasPrefix(line, "### "):
			b.WriteString("  ")
			b.WriteString(inline(strings.TrimSpace(line[4:])))
		default:
			b.WriteString("    ")
			b.WriteString(inline(strings.TrimRight(line, " \t")))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// inline drops bold markers and writes links as "text (url)"; code spans
// keep their backticks so literal values stay recognisable.
func inline(s string) string {
	s = boldMarks.ReplaceAllString(s, "$1")
	return mdLink.ReplaceAllStringFunc(s, func(m string) string {
		p := mdLink.FindStringSubmatch(m)
		if p[1] == p[2] {
			return p[1]
		}
		return p[1] + " (" + p[2] + ")"
	})
}
