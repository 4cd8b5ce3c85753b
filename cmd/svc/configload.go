package main

import (
	"fmt"
	"io"

	"svc/platform/config"
)

// loadConfig reads the configuration every command shares (environment,
// profile files, .env, user and system files) and prints its warnings, such
// as an unknown SVC_ variable, to stderr. A refused configuration is one
// line on stderr and ok false (the command exits 1).
func loadConfig(stderr io.Writer) (cfg *config.Config, ok bool) {
	cfg, err := config.Load(config.OSSource())
	if err != nil {
		fmt.Fprintf(stderr, "svc: configuration: %v\n", err)
		return nil, false
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stderr, "svc: warning: %s\n", w)
	}
	return cfg, true
}

// warnUnknown prints the unknown-variable warnings of the configuration
// for a command that does not load it (version, init, import, export), as
// loadConfig prints them for the others.
func warnUnknown(stderr io.Writer) {
	for _, w := range config.UnknownWarnings(config.OSSource()) {
		fmt.Fprintf(stderr, "svc: warning: %s\n", w)
	}
}
