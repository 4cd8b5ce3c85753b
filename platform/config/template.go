package config

import (
	"fmt"
	"strings"
)

// Template is the commented configuration file `svc init` writes: every
// variable at its default, grouped as in the help topics.
func Template() string {
	var b strings.Builder
	b.WriteString("# svc configuration (.env format). Uncomment a line to change it.\n")
	b.WriteString("# The process environment overrides this file; `svc help config` explains each group.\n")
	vars := Vars(&Config{})
	for _, g := range Groups {
		fmt.Fprintf(&b, "\n# --- %s ---\n", g)
		for _, v := range vars {
			if v.Group != g {
				continue
			}
			fmt.Fprintf(&b, "# %s (%s)\n# %s=%s\n", v.Doc, v.Kind, v.Name, v.Default)
		}
	}
	return b.String()
}
