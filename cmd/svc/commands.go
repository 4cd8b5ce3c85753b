package main

import (
	"fmt"
	"io"
	"strings"
)

// commands are the subcommands `svc help` lists before the topic tree, so a
// person typing `svc help` learns what svc can do before what it knows.
var commands = []struct{ name, what string }{
	{"serve", "run the service (the default when no command is given)"},
	{"version", "print the build's version, commit and date"},
	{"help [topic]", "print this list and the topic tree, or one topic"},
	{"health", "probe the admin listener's /readyz (exit 0 ready, 1 not)"},
	{"init", "write ~/.config/svc/svc.env selecting the SQLite backend, every other variable at its default"},
	{"migrate", "apply the storage backend's migrations (PostgreSQL or SQLite) and exit"},
	{"backup --to FILE", "copy the SQLite database, online, to FILE (PostgreSQL: use pg_dump)"},
	{"import", "stream NDJSON or JSON-array files into a running svc (resumable; --restore DIR for an export --all)"},
	{"export", "stream a model's entities as NDJSON, or --all -o DIR a tenant's models, workflows and entities"},
}

func writeCommands(w io.Writer) error {
	var b strings.Builder
	b.WriteString("usage: svc [command]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-14s  %s\n", c.name, c.what)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
