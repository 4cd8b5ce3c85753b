// Command svc is the entity service: `svc` or `svc serve` runs it; the other
// subcommands help operate it.
package main

import (
	"fmt"
	"os"
)

// Stamped at build time with -ldflags "-X main.version=...".
var (
	version   = "dev"
	commit    = "unknown"
	buildDate = "unknown"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
		args = args[1:]
	}
	switch cmd {
	case "serve":
		return serve()
	case "version", "--version", "-v":
		warnUnknown(os.Stderr)
		fmt.Printf("svc version %s (commit %s, built %s)\n", version, commit, buildDate)
		return 0
	case "help", "--help", "-h":
		return helpCmd(args, os.Stdout)
	case "health":
		return health()
	case "init":
		warnUnknown(os.Stderr)
		return initCmd(args)
	case "migrate":
		return migrate()
	case "backup":
		return backupCmd(args, os.Stdout, os.Stderr)
	case "import":
		warnUnknown(os.Stderr)
		return importCmd(args, os.Stdin, os.Stdout, os.Stderr)
	case "export":
		warnUnknown(os.Stderr)
		return exportCmd(args, os.Stdout, os.Stderr)
	default:
		fmt.Fprintf(os.Stderr, "svc: unknown command %q; try `svc help cli`\n", cmd)
		return 2
	}
}
