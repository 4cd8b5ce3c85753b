package config

import (
	"fmt"
	"strings"
)

// The configuration reference is written from the variable table by
// `make generate` (docs/gen): the README's table of each group and the
// variable lists of help/topics/config/<group>.md. These functions render
// them; docs/gen splices them into the files.

// ReadmeTable is the README's table of group's variables: name (with
// `_FILE` when the variable accepts a file), kind, default and Doc.
func ReadmeTable(group string) string {
	var b strings.Builder
	b.WriteString("| Variable | Type | Default | Meaning |\n|---|---|---|---|\n")
	for _, v := range Vars(&Config{}) {
		if v.Group != group {
			continue
		}
		name := "`" + v.Name + "`"
		if v.File {
			name += " (+`_FILE`)"
		}
		def := "—"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, v.Kind, def, strings.ReplaceAll(v.Doc, "|", `\|`))
	}
	return b.String()
}

// HelpSection is one heading of a config help topic with the list lines of
// its variables.
type HelpSection struct {
	Heading string
	Lines   []string
}

// HelpSections returns group's variable lists by heading, headings in the
// order their first variable appears in the table.
func HelpSections(group string) []HelpSection {
	var out []HelpSection
	at := map[string]int{}
	for _, v := range Vars(&Config{}) {
		if v.Group != group {
			continue
		}
		h := HelpOf(v)
		heading := h.Section
		if heading == "" {
			heading = "VARIABLES"
		}
		i, ok := at[heading]
		if !ok {
			i = len(out)
			at[heading] = i
			out = append(out, HelpSection{Heading: heading})
		}
		def := "no default"
		if v.Default != "" {
			def = "default `" + v.Default + "`"
		}
		out[i].Lines = append(out[i].Lines, fmt.Sprintf("- `%s` (%s, %s): %s", v.Name, v.Kind, def, h.Text))
	}
	return out
}
