// Command suite runs svc's key load scenarios as a user meets them — jwt
// mode with real tokens, TCP loopback, fresh server and database for every
// run — and prints each figure beside yardsticks measured in the same run:
// an RSA-2048 signature, a bare PostgreSQL INSERT of the same document
// (single-row autocommit and 1,000-row), and /health. With two builds it
// alternates them (A B A B …) and compares their CPU per request with the
// noise of the run, in a table and in benchstat's input format.
//
//	go run ./bench/suite -svc bin/svc -loadgen bin/loadgen            # make bench
//	go run ./bench/suite -svc base=/tmp/a,head=/tmp/b -set compare -rounds 3   # make bench-compare
//	go run ./bench/suite -yardsticks                                  # the yardsticks alone
//
// The machine is shared: absolute figures drift from day to day, the
// multiples of the yardsticks and a same-run comparison much less.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"svc/bench/procstat"
	"svc/internal/freeport"
)

// scenario is one bench/loadgen scenario on one engine.
type scenario struct {
	Name    string // e.g. "order-create/postgres"
	Loadgen string // loadgen's scenario
	Engine  string // memory, sqlite or postgres
	C       int    // connections
	// Yard names the yardstick the figure is best read against: sign,
	// health, insert1 or insert1000.
	Yard string
	// Per is how many entities one request carries (collections: 1000);
	// loadgen then reports CPU per entity, and the rate is made one too.
	Per int
	// Unix: svc reaches PostgreSQL over its Unix socket instead of TCP
	// loopback (the "-unix" rows: what a server on the same host saves).
	Unix bool
	// Preload is a loadgen run (its arguments) made before the measured
	// one, not counted: the "-held" rows measure a server that already
	// holds what it wrote.
	Preload []string
}

var all = []scenario{
	{"health/memory", "health", "memory", 16, "health", 1, false, nil},
	{"token/memory", "token", "memory", 4, "sign", 1, false, nil},
	{"get-1kb/memory", "get", "memory", 16, "health", 1, false, nil},
	{"create-1kb/memory", "create", "memory", 16, "health", 1, false, nil},
	{"collection-1kb/memory", "collection", "memory", 2, "health", 1000, false, nil},
	{"order-get/memory", "order-get", "memory", 16, "health", 1, false, nil},
	{"order-create/memory", "order-create", "memory", 16, "health", 1, false, nil},
	{"order-collection/memory", "order-collection", "memory", 2, "health", 1000, false, nil},
	{"export-simple-view/memory", "order-export", "memory", 1, "health", 1, false, nil},
	{"get-1kb/postgres", "get", "postgres", 16, "insert1", 1, false, nil},
	{"create-1kb/postgres", "create", "postgres", 16, "insert1", 1, false, nil},
	{"collection-1kb/postgres", "collection", "postgres", 2, "insert1000", 1000, false, nil},
	{"order-get/postgres", "order-get", "postgres", 16, "insert1", 1, false, nil},
	{"order-create/postgres", "order-create", "postgres", 16, "insert1", 1, false, nil},
	{"order-collection/postgres", "order-collection", "postgres", 2, "insert1000", 1000, false, nil},
	{"create-1kb-c1/memory", "create", "memory", 1, "health", 1, false, nil},
	{"model-list/memory", "model-list", "memory", 16, "health", 1, false, nil},
	{"collection-1kb-held/memory", "collection", "memory", 2, "health", 1000, false, heldPreload},
	{"order-get/sqlite", "order-get", "sqlite", 16, "health", 1, false, nil},
	{"order-create/sqlite", "order-create", "sqlite", 16, "health", 1, false, nil},
	{"order-collection/sqlite", "order-collection", "sqlite", 2, "health", 1000, false, nil},
	{"order-get/postgres-unix", "order-get", "postgres", 16, "insert1", 1, true, nil},
	{"order-create/postgres-unix", "order-create", "postgres", 16, "insert1", 1, true, nil},
	{"order-collection/postgres-unix", "order-collection", "postgres", 2, "insert1000", 1000, true, nil},
}

// heldPreload is 300 000 single creates of loadgen's ~1 KB document (issue
// 25 item 2: collection ingest into a server that holds 300 000 entities,
// against the same into a fresh one).
var heldPreload = []string{"-scenario", "create", "-c", "16", "-n", "300000", "-d", "30m"}

// sets are the scenario lists of -set.
var sets = map[string][]string{
	"all": nil, // every scenario
	// compare: what make bench-compare runs (tokens, get, single create
	// and collection on memory and PostgreSQL, SIMPLE_VIEW export).
	"compare": {"health/memory", "token/memory", "get-1kb/memory", "create-1kb/memory", "collection-1kb/memory",
		"export-simple-view/memory", "order-get/postgres", "order-create/postgres", "order-collection/postgres"},
	"quick": {"health/memory", "token/memory", "order-create/memory", "order-create/postgres"},
	// storage: the PostgreSQL write scenarios, for -pg-variants (what each
	// index and the audit rows cost per create).
	"storage": {"health/memory", "order-create/postgres", "order-collection/postgres"},
	// held: the memory engine's ratios of issue 25 item 2 (collection into
	// a server holding 300 000 entities over a fresh one; create over get).
	"held": {"health/memory", "get-1kb/memory", "create-1kb/memory", "collection-1kb/memory", "collection-1kb-held/memory"},
	// issue25: the rows of issue 25's table (memory engine, 1 KB documents).
	"issue25": {"health/memory", "token/memory", "get-1kb/memory", "create-1kb/memory", "create-1kb-c1/memory",
		"collection-1kb/memory", "collection-1kb-held/memory", "model-list/memory"},
	// sqlite: the SQLite engine beside the memory engine (issue 27 item 6).
	"sqlite": {"health/memory", "order-get/memory", "order-create/memory", "order-collection/memory",
		"order-get/sqlite", "order-create/sqlite", "order-collection/sqlite"},
	// unix: TCP loopback and the Unix socket side by side.
	"unix": {"health/memory", "order-get/postgres", "order-create/postgres", "order-collection/postgres",
		"order-get/postgres-unix", "order-create/postgres-unix", "order-collection/postgres-unix"},
}

// build is one svc binary under test; SQL, when set, runs on each fresh
// PostgreSQL database once svc has migrated it and before the load (a
// storage variant of -pg-variants, e.g. one index dropped).
type build struct{ Name, Path, SQL string }

// sample is one loadgen run's figures.
type sample struct {
	SvcUs, PgUs, Rate float64 // CPU per request (or entity); requests (entities) per second
	RSSIdleKiB        int64   // svc's resident size before the load, after start-up
	Load              float64
}

// yardsticks are one round's fixed pieces of work.
type yardsticks struct {
	Sign, Verify      float64 // µs CPU, one thread, crypto/rsa of this suite's build
	SignPar           float64 // µs process CPU per signature, one signing goroutine per core
	Insert1, Insert1k float64 // µs PostgreSQL CPU per row
}

func main() {
	var (
		svcFlag    = flag.String("svc", "bin/svc", "svc binary, or name=path,name=path… to compare builds (alternated every round)")
		loadgen    = flag.String("loadgen", "bin/loadgen", "bench/loadgen binary")
		set        = flag.String("set", "all", "scenario set: all, compare, quick")
		only       = flag.String("scenarios", "", "comma-separated scenario names (overrides -set); health/memory is always run")
		rounds     = flag.Int("rounds", 1, "rounds; each runs every scenario against every build, in alternation")
		dur        = flag.Duration("d", 5*time.Second, "load time of each run")
		private    = flag.Bool("pg-private", true, "start a private PostgreSQL for the run (initdb; its CPU is the run's alone); false uses -pg")
		pgBase     = flag.String("pg", "postgres://postgres@127.0.0.1:5432", "shared PostgreSQL server (URL without a database) when -pg-private=false")
		pgData     = flag.String("pg-data", "", "the shared server's data directory (for its postmaster's pid)")
		out        = flag.String("out", "", "directory for benchstat-format files, one per build (NAME.txt)")
		yardOnly   = flag.Bool("yardsticks", false, "measure the RSA yardsticks only (and the INSERT ones with -pg-private or -pg) and exit")
		noPG       = flag.Bool("no-pg", false, "skip PostgreSQL: its scenarios and the INSERT yardsticks")
		benchstat_ = flag.String("benchstat", "", "benchstat binary (default: benchstat on PATH or in $(go env GOPATH)/bin, if there)")
		variants   = flag.String("pg-variants", "", "comma-separated storage variants run as separate builds of the one -svc binary (\"all\" for every one): "+variantNames())
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, config{svc: *svcFlag, loadgen: *loadgen, set: *set, only: *only, rounds: *rounds, dur: *dur,
		private: *private, pgBase: *pgBase, pgData: *pgData, out: *out, yardOnly: *yardOnly, noPG: *noPG, benchstat: *benchstat_,
		variants: *variants}); err != nil {
		fmt.Fprintf(os.Stderr, "suite: %v\n", err)
		os.Exit(1)
	}
}

type config struct {
	svc, loadgen, set, only, pgBase, pgData, out, benchstat, variants string
	rounds                                                            int
	dur                                                               time.Duration
	private, yardOnly, noPG                                           bool
}

func run(ctx context.Context, cfg config) error {
	fmt.Printf("suite: %s, %d cores, %s; load average at start %s\n", runtime.Version(), runtime.NumCPU(), cryptoName(), loadavg())
	var pg *pgServer
	var err error
	if !cfg.noPG {
		if cfg.private {
			bin := pgBinDir()
			if bin == "" {
				return errors.New("no initdb found for -pg-private; pass -pg-private=false -pg URL, or -no-pg")
			}
			if pg, err = startPrivatePG(bin); err != nil {
				return err
			}
			defer pg.stop()
			fmt.Printf("suite: private PostgreSQL (%s) at %s, postmaster %d\n", bin, pg.base, pg.pid)
		} else {
			if pg, err = sharedPG(cfg.pgBase, cfg.pgData); err != nil {
				return err
			}
			fmt.Printf("suite: shared PostgreSQL at %s, postmaster %d (other users' work counts in its CPU)\n", pg.base, pg.pid)
		}
	}
	if cfg.yardOnly {
		y, err := measureYardsticks(ctx, pg)
		if err != nil {
			return err
		}
		fmt.Print(y.String())
		return nil
	}
	builds, err := parseBuilds(cfg.svc)
	if err != nil {
		return err
	}
	if cfg.variants != "" {
		if builds, err = withVariants(builds, cfg.variants); err != nil {
			return err
		}
	}
	scens, err := pick(cfg.set, cfg.only, pg == nil)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchsuite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	keyFile, err := writeKey(tmp)
	if err != nil {
		return err
	}
	secret := randomHex(24)
	res := newResults(builds, scens)
	for r := 0; r < cfg.rounds; r++ {
		y, err := measureYardsticks(ctx, pg)
		if err != nil {
			return err
		}
		res.yards = append(res.yards, y)
		fmt.Printf("\n== round %d/%d: %s", r+1, cfg.rounds, y.String())
		for _, sc := range scens {
			// Alternate the order of the builds every round too.
			order := builds
			if r%2 == 1 {
				order = reversed(builds)
			}
			for _, b := range order {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s, err := runOne(ctx, cfg, b, sc, pg, keyFile, secret)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", sc.Name, b.Name, err)
				}
				fmt.Printf("%-28s %-6s svc %8s µs  pg %8s µs  %9.0f /s  idle RSS %6.1f MiB  load %.1f\n",
					sc.Name, b.Name, fmtNum(s.SvcUs), fmtNum(s.PgUs), s.Rate, float64(s.RSSIdleKiB)/1024, s.Load)
				res.add(r, b.Name, sc.Name, s)
			}
		}
	}
	fmt.Printf("\nload average at the end %s\n", loadavg())
	fmt.Print(res.table())
	if cfg.out != "" || len(builds) > 1 {
		dir := cfg.out
		if dir == "" {
			dir = tmp
		}
		files, err := res.writeBenchstat(dir)
		if err != nil {
			return err
		}
		if bs := findBenchstat(cfg.benchstat); bs != "" {
			cmd := exec.CommandContext(ctx, bs, files...)
			cmd.Dir = dir
			o, err := cmd.CombinedOutput()
			fmt.Printf("\nbenchstat %s:\n%s", strings.Join(files, " "), o)
			if err != nil {
				fmt.Printf("benchstat: %v\n", err)
			}
		}
	}
	return nil
}

func cryptoName() string {
	if boringEnabled() {
		return "crypto: BoringCrypto (GOEXPERIMENT=boringcrypto)"
	}
	return "crypto: Go crypto/rsa"
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func parseBuilds(s string) ([]build, error) {
	var out []build
	for _, part := range strings.Split(s, ",") {
		name, path, ok := strings.Cut(part, "=")
		if !ok {
			name, path = "svc", part
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("svc binary %s: %w", path, err)
		}
		out = append(out, build{Name: name, Path: path})
	}
	return out, nil
}

func reversed(b []build) []build {
	out := make([]build, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

func pick(set, only string, noPG bool) ([]scenario, error) {
	var names []string
	switch {
	case only != "":
		names = append([]string{"health/memory"}, strings.Split(only, ",")...)
	default:
		n, ok := sets[set]
		if !ok {
			return nil, fmt.Errorf("unknown -set %q", set)
		}
		names = n
	}
	var out []scenario
	seen := map[string]bool{}
	for _, sc := range all {
		want := names == nil
		for _, n := range names {
			want = want || n == sc.Name
		}
		if !want || seen[sc.Name] || (noPG && sc.Engine == "postgres") {
			continue
		}
		seen[sc.Name] = true
		out = append(out, sc)
	}
	for _, n := range names {
		if !seen[n] && !(noPG && strings.HasSuffix(n, "/postgres")) {
			return nil, fmt.Errorf("unknown scenario %q", n)
		}
	}
	return out, nil
}

func measureYardsticks(ctx context.Context, pg *pgServer) (yardsticks, error) {
	y := yardsticks{}
	var err error
	if y.Sign, y.SignPar, y.Verify, err = rsaYardsticks(); err != nil {
		return y, err
	}
	if pg != nil {
		url, drop, err := pg.freshDB(ctx, "benchsuite_yard")
		if err != nil {
			return y, err
		}
		defer drop()
		if y.Insert1, y.Insert1k, err = pgYardsticks(ctx, url, pg.pid); err != nil {
			return y, err
		}
	}
	return y, nil
}

func (y yardsticks) String() string {
	s := fmt.Sprintf("yardsticks: RSA-2048 sign %s µs (%s µs process CPU with a signer per core), verify %s µs CPU", fmtNum(y.Sign), fmtNum(y.SignPar), fmtNum(y.Verify))
	if y.Insert1 > 0 {
		s += fmt.Sprintf("; bare INSERT of an order into a GIN-indexed jsonb table, PostgreSQL CPU per row: autocommit %s µs, 1,000-row %s µs", fmtNum(y.Insert1), fmtNum(y.Insert1k))
	}
	return s + "; load " + loadavg() + "\n"
}

func writeKey(dir string) (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "signing.pem")
	return p, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort picks below the kernel's ephemeral range (internal/freeport): a
// probe of :0 was taken again by a loadgen connection before svc bound it
// ("address already in use"), which ended a whole run.
func freePort() (int, error) { return freeport.Next() }

// runOne starts a fresh svc (and database) in jwt mode, runs one loadgen
// scenario with a token fetched with the bootstrap client, and stops both.
func runOne(ctx context.Context, cfg config, b build, sc scenario, pg *pgServer, keyFile, secret string) (sample, error) {
	var ports [3]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return sample{}, err
		}
		ports[i] = p
	}
	env := append(os.Environ(),
		"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE="+keyFile,
		"SVC_BOOTSTRAP_CLIENT_ID=benchsuite", "SVC_BOOTSTRAP_CLIENT_SECRET="+secret,
		"SVC_STORAGE_BACKEND="+sc.Engine,
		"SVC_HTTP_PORT="+strconv.Itoa(ports[0]), "SVC_ADMIN_PORT="+strconv.Itoa(ports[1]), "SVC_GRPC_PORT="+strconv.Itoa(ports[2]),
		"SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=warn")
	pgPID, pgURL := 0, ""
	if sc.Engine == "sqlite" {
		dir, err := os.MkdirTemp("", "benchsuite-sqlite-")
		if err != nil {
			return sample{}, err
		}
		defer os.RemoveAll(dir)
		env = append(env, "SVC_SQLITE_PATH="+filepath.Join(dir, "svc.db"))
	}
	if sc.Engine == "postgres" {
		url, drop, err := pg.freshDB(ctx, "benchsuite")
		if err != nil {
			return sample{}, err
		}
		defer drop()
		if sc.Unix {
			if url, err = pg.unixURL(url); err != nil {
				return sample{}, err
			}
		}
		env = append(env, "SVC_POSTGRES_URL="+url)
		pgPID = pg.pid
		pgURL = url
	}
	var stderr bytes.Buffer
	svc := exec.Command(b.Path)
	svc.Env = env
	svc.Stdout, svc.Stderr = &stderr, &stderr
	if err := svc.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		_ = svc.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = svc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = svc.Process.Kill()
			<-done
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d/api", ports[0])
	if err := awaitHealth(ctx, base, 2*time.Minute); err != nil {
		return sample{}, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	if b.SQL != "" && pgURL != "" {
		if err := execSQL(ctx, pgURL, b.SQL); err != nil {
			return sample{}, fmt.Errorf("variant %s: %w", b.Name, err)
		}
	}
	if len(sc.Preload) > 0 {
		pre := exec.CommandContext(ctx, cfg.loadgen, append([]string{"-url", base}, sc.Preload...)...)
		pre.Env = append(os.Environ(), "LOADGEN_CLIENT_ID=benchsuite", "LOADGEN_CLIENT_SECRET="+secret)
		if o, err := pre.CombinedOutput(); err != nil {
			return sample{}, fmt.Errorf("preload: %v\n%s", err, o)
		}
	}
	var s sample
	s.RSSIdleKiB, _ = procstat.RSS(svc.Process.Pid)
	s.Load = procstat.Load1()
	lg := exec.CommandContext(ctx, cfg.loadgen, "-url", base, "-scenario", sc.Loadgen, "-c", strconv.Itoa(sc.C),
		"-d", cfg.dur.String(), "-svc-pid", strconv.Itoa(svc.Process.Pid), "-pg-pid", strconv.Itoa(pgPID))
	lg.Env = append(os.Environ(), "LOADGEN_CLIENT_ID=benchsuite", "LOADGEN_CLIENT_SECRET="+secret)
	o, err := lg.CombinedOutput()
	if err != nil {
		return s, fmt.Errorf("loadgen: %v\n%s\nsvc: %s", err, o, stderr.String())
	}
	if err := parseLoadgen(o, sc.Per, &s); err != nil {
		return s, fmt.Errorf("%v\n%s", err, o)
	}
	return s, nil
}

func awaitHealth(ctx context.Context, base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if r, err := http.Get(base + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("svc did not answer %s/health within %s", base, limit)
}

var (
	reRate = regexp.MustCompile(`requests (\d+) in ([^:]+): ([0-9.]+) req/s;.*errors (\d+)`)
	reCPU  = regexp.MustCompile(`^(server|database) CPU [0-9.]+ s \([0-9.]+ cores\): ([0-9.]+) µs per (request|entity)`)
)

// parseLoadgen reads loadgen's report: the rate, the errors (a run with
// any is refused: its CPU would be that of failures) and the server and
// database CPU per request or entity; per is the entities per request
// (the rate is made per entity like the CPU).
func parseLoadgen(out []byte, per int, s *sample) error {
	var sawRate, sawSvc bool
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := reRate.FindStringSubmatch(line); m != nil {
			if m[4] != "0" {
				return fmt.Errorf("loadgen counted %s errors", m[4])
			}
			s.Rate, _ = strconv.ParseFloat(m[3], 64)
			if per > 1 {
				s.Rate *= float64(per)
			}
			sawRate = true
		}
		if m := reCPU.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			if m[1] == "server" {
				s.SvcUs, sawSvc = v, true
			} else {
				s.PgUs = v
			}
		}
	}
	if !sawRate || !sawSvc {
		return errors.New("no rate or server CPU in loadgen's report")
	}
	return nil
}
