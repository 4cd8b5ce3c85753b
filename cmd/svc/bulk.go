package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"svc/bulk"
)

// bulkFlags are the connection and display flags of `svc import` and
// `svc export`. Each flag falls back to an SVC_CLI_* variable, so
// credentials need not appear in a process list.
type bulkFlags struct {
	url, token, clientID, clientSecret string
	progress                           string
	interval                           time.Duration
}

func (f *bulkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", envOr("SVC_CLI_URL", "http://127.0.0.1:8080/api"), "svc API base URL including the context path (SVC_CLI_URL)")
	fs.StringVar(&f.token, "token", os.Getenv("SVC_CLI_TOKEN"), "bearer token (SVC_CLI_TOKEN)")
	fs.StringVar(&f.clientID, "client-id", os.Getenv("SVC_CLI_CLIENT_ID"), "machine client id, exchanged for a token (SVC_CLI_CLIENT_ID)")
	fs.StringVar(&f.clientSecret, "client-secret", os.Getenv("SVC_CLI_CLIENT_SECRET"), "machine client secret (SVC_CLI_CLIENT_SECRET)")
	fs.StringVar(&f.progress, "progress", "auto", "auto (a bar on a terminal, plain lines otherwise), bar, plain or none")
	fs.DurationVar(&f.interval, "progress-interval", 0, "time between progress updates (default 200ms on a terminal, 5s otherwise)")
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func (f *bulkFlags) client() *bulk.Client {
	return &bulk.Client{URL: strings.TrimRight(f.url, "/"), Token: f.token, ClientID: f.clientID, ClientSecret: f.clientSecret,
		HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: 10 * time.Minute}}}
}

// newProgress makes a display on stderr, or nil for --progress none.
func (f *bulkFlags) newProgress(verb string) (*bulk.Progress, error) {
	p := &bulk.Progress{Verb: verb, Out: os.Stderr, Interval: f.interval}
	switch f.progress {
	case "auto":
		p.Terminal = bulk.IsTerminal(os.Stderr)
	case "bar":
		p.Terminal = true
	case "plain":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("--progress %q: want auto, bar, plain or none", f.progress)
	}
	return p, nil
}

// authenticated checks the credentials once before any work
// (bulk.Client.CheckAuth) and prints what is wrong, naming the flags.
func authenticated(ctx context.Context, c *bulk.Client, stderr io.Writer, cmd string) bool {
	if err := c.CheckAuth(ctx); err != nil {
		fmt.Fprintln(stderr, cmd+":", err)
		return false
	}
	return true
}

// interruptible is a context that SIGINT and SIGTERM cancel.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func importCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svc import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f bulkFlags
	f.register(fs)
	model := fs.String("model", "", "target model NAME/VERSION (required unless --restore)")
	batchSize := fs.Int("batch", 1000, "documents per request; each request is one transaction (1..1000)")
	conns := fs.Int("connections", 4, "requests in flight")
	checkpoint := fs.String("checkpoint", "", "resume file: records committed documents; rerun with the same file to resume")
	createModel := fs.Bool("create-model", false, "infer the model from the first --sample documents and lock it, unless it is locked")
	sample := fs.Int("sample", 100, "documents --create-model infers the model from")
	restore := fs.String("restore", "", "restore `DIR`, a directory written by svc export --all (models, workflows, entities)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc import --model NAME/VERSION [flags] [FILE|DIR|- ...]\n       svc import --restore DIR [flags]\n\n"+
			"Reads NDJSON or JSON-array files (.gz too), directories of them, or standard input, and creates one entity per document.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := interruptible()
	defer stop()
	c := f.client()
	progress := func(verb string) func(m bulk.ModelRef) *bulk.Progress {
		return func(m bulk.ModelRef) *bulk.Progress {
			p, _ := f.newProgress(verb + " " + m.String())
			return p
		}
	}
	if _, err := f.newProgress("check"); err != nil {
		fmt.Fprintln(stderr, "svc import:", err)
		return 2
	}

	if *restore != "" {
		if !authenticated(ctx, c, stderr, "svc import") {
			return 1
		}
		man, err := bulk.Restore(ctx, c, bulk.RestoreOptions{Dir: *restore, Connections: *conns, Checkpoint: *checkpoint, Progress: progress("restore")})
		if err != nil {
			return bulkFailure(stderr, "svc import", err, *checkpoint)
		}
		for _, m := range man.Models {
			fmt.Fprintf(stdout, "restored %s/%d: %d entities\n", m.Name, m.Version, m.Entities)
		}
		return 0
	}

	ref, err := bulk.ParseModelRef(*model)
	if err != nil {
		fmt.Fprintln(stderr, "svc import:", err)
		return 2
	}
	srcs, err := bulk.Sources(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "svc import:", err)
		return 1
	}
	if !authenticated(ctx, c, stderr, "svc import") {
		return 1
	}
	p, _ := f.newProgress("import")
	if p != nil {
		for _, s := range srcs {
			p.Total += s.Size
		}
	}
	res, err := bulk.Import(ctx, c, bulk.ImportOptions{Model: ref, Sources: srcs, Stdin: stdin, Batch: *batchSize, Connections: *conns,
		Checkpoint: *checkpoint, CreateModel: *createModel, Sample: *sample, Progress: p})
	if err != nil {
		if res != nil {
			fmt.Fprintf(stderr, "svc import: %d documents committed before stopping\n", res.Created)
		}
		return bulkFailure(stderr, "svc import", err, *checkpoint)
	}
	fmt.Fprintf(stdout, "imported %d documents into %s", res.Created, ref)
	if res.Skipped > 0 {
		fmt.Fprintf(stdout, " (%d committed by an earlier run skipped)", res.Skipped)
	}
	fmt.Fprintln(stdout)
	return 0
}

func bulkFailure(stderr io.Writer, cmd string, err error, checkpoint string) int {
	if errors.Is(err, bulk.ErrInterrupted) {
		if checkpoint != "" {
			fmt.Fprintf(stderr, "%s: interrupted; progress saved in %s: run the same command again to resume\n", cmd, checkpoint)
		} else {
			fmt.Fprintf(stderr, "%s: interrupted (no --checkpoint: a rerun starts from the beginning)\n", cmd)
		}
		return 130
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
	return 1
}

func exportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svc export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f bulkFlags
	f.register(fs)
	model := fs.String("model", "", "model NAME/VERSION (required unless --all)")
	at := fs.String("at", "", "read as at this instant (RFC 3339); default now")
	cond := fs.String("condition", "", "only entities matching this search condition (JSON)")
	out := fs.String("o", "-", "output file (NDJSON), or the directory for --all; - is standard output")
	all := fs.Bool("all", false, "export every model of the tenant (models, workflows, entities) into the -o directory")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc export --model NAME/VERSION [--at T] [--condition JSON] [-o FILE]\n       svc export --all -o DIR\n\n"+
			"Streams entities as NDJSON envelopes (one per line) read at one point in time.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if _, err := f.newProgress("check"); err != nil {
		fmt.Fprintln(stderr, "svc export:", err)
		return 2
	}
	ctx, stop := interruptible()
	defer stop()
	c := f.client()
	if *all {
		if *out == "-" {
			fmt.Fprintln(stderr, "svc export: --all needs -o DIR")
			return 2
		}
		if !authenticated(ctx, c, stderr, "svc export") {
			return 1
		}
		man, err := bulk.ExportAll(ctx, c, *out, func(m bulk.ModelRef) *bulk.Progress {
			p, _ := f.newProgress("export " + m.String())
			return p
		})
		if err != nil {
			return bulkFailure(stderr, "svc export", err, "")
		}
		fmt.Fprintf(stdout, "exported %d models as at %s into %s\n", len(man.Models), man.PointInTime, *out)
		return 0
	}
	ref, err := bulk.ParseModelRef(*model)
	if err != nil {
		fmt.Fprintln(stderr, "svc export:", err)
		return 2
	}
	if !authenticated(ctx, c, stderr, "svc export") {
		return 1
	}
	w := stdout
	var file *os.File
	if *out != "-" {
		if file, err = os.Create(*out); err != nil {
			fmt.Fprintln(stderr, "svc export:", err)
			return 1
		}
		w = file
	}
	p, _ := f.newProgress("export")
	n, pit, err := bulk.Export(ctx, c, bulk.ExportOptions{Model: ref, At: *at, Condition: *cond, Out: w, Progress: p})
	if file != nil {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return bulkFailure(stderr, "svc export", err, "")
	}
	fmt.Fprintf(stderr, "exported %d entities of %s as at %s\n", n, ref, pit)
	return 0
}
