// Command loadgen drives a running svc with a closed-loop load and prints
// throughput and latency percentiles:
//
//	go run ./bench/loadgen -url http://127.0.0.1:8080/api -c 32 -d 10s -scenario help
//
// Each of -c workers sends its next request as soon as the previous one is
// answered. The run stops after -d or -n requests, whichever comes first.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Scenario builds one request per call; worker and seq let scenarios vary
// their requests without shared state.
type Scenario struct {
	Describe string
	// Setup runs once before the load, e.g. to create fixtures.
	Setup func(c *fasthttp.Client, base string) error
	Build func(req *fasthttp.Request, base string, worker int, seq uint64)
	// OK says whether a status counts as success.
	OK func(status int) bool
	// PerRequest is how many entities one request carries (0 or 1: CPU
	// is reported per request, more: per entity).
	PerRequest int
	// Public scenarios' measured requests go without the run's token (a
	// public route: /health and help are yardsticks of the bare server).
	Public bool
}

// scenarios are every scenario by name: the built-in ones below and, added
// explicitly, each scenario file's.
var scenarios = allScenarios()

func allScenarios() map[string]Scenario {
	s := baseScenarios()
	authScenarios(s)
	entityScenarios(s)
	modelScenarios(s)
	orderScenarios(s)
	searchScenarios(s)
	workflowScenarios(s)
	return s
}

func baseScenarios() map[string]Scenario {
	return map[string]Scenario{
		"help": {
			Describe: "GET {ctx}/help/{topic} (public, precomputed body)",
			Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
				req.SetRequestURI(base + "/help/cli")
				req.Header.SetMethod("GET")
			},
			OK:     func(s int) bool { return s == 200 },
			Public: true,
		},
		"health": {
			Describe: "GET {ctx}/health",
			Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
				req.SetRequestURI(base + "/health")
				req.Header.SetMethod("GET")
			},
			OK:     func(s int) bool { return s == 200 },
			Public: true,
		},
	}
}

func main() {
	var (
		target   = flag.String("url", "http://127.0.0.1:8080/api", "base URL including the context path; several, comma-separated, spread the workers over them (cluster nodes)")
		conc     = flag.Int("c", 32, "concurrent workers (closed loop)")
		dur      = flag.Duration("d", 10*time.Second, "run time")
		maxReq   = flag.Uint64("n", 0, "stop after this many requests (0 = no limit)")
		scenario = flag.String("scenario", "help", "scenario: "+strings.Join(names(), ", "))
		token    = flag.String("token", "", "bearer token sent with every request, setup included (default: one fetched with LOADGEN_CLIENT_ID/LOADGEN_CLIENT_SECRET when set)")
		remote   = flag.Bool("allow-remote", false, "allow a non-loopback target")
		svcPID   = flag.Int("svc-pid", 0, "report this process's CPU per request (/proc/<pid>/stat)")
		pgPID    = flag.Int("pg-pid", 0, "report the CPU of this postmaster and its children per request")
	)
	flag.Parse()
	sc, ok := scenarios[*scenario]
	if !ok {
		fmt.Fprintf(os.Stderr, "loadgen: unknown scenario %q (have %s)\n", *scenario, strings.Join(names(), ", "))
		os.Exit(2)
	}
	bases := strings.Split(*target, ",")
	for _, b := range bases {
		if err := checkTarget(b, *remote); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen: %v\n", err)
			os.Exit(2)
		}
	}
	probe := &cpuProbe{svcPID: *svcPID, pgPID: *pgPID}
	res, err := Run(Options{Base: bases[0], Bases: bases, Concurrency: *conc, Duration: *dur, MaxRequests: *maxReq, Token: *token,
		ClientID: os.Getenv("LOADGEN_CLIENT_ID"), ClientSecret: os.Getenv("LOADGEN_CLIENT_SECRET"), CPU: probe}, sc)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("scenario %s: %s\n", *scenario, sc.Describe)
	fmt.Println(res)
	fmt.Print(probe.report(res.Requests-res.Errors, sc.PerRequest, res.Elapsed.Seconds()))
}

func names() []string {
	var n []string
	for k := range scenarios {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// checkTarget keeps load on this machine unless told otherwise.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("bad -url %q", raw)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-url %q is not a loopback address; pass -allow-remote to load another host", raw)
}

// Options configure one run.
type Options struct {
	// Base is where the scenario's setup runs; Bases, when set, are the
	// targets of the workers (worker w uses Bases[w % len]): the nodes of
	// a cluster sharing one database behind one load generator.
	Base        string
	Bases       []string
	Concurrency int
	Duration    time.Duration
	MaxRequests uint64
	// Token is sent as a bearer token with every call, the scenario's
	// setup included. Without it, ClientID and ClientSecret (when set)
	// fetch one with client_credentials before the setup: a server in jwt
	// mode, the mode users run, answers 401 to calls without one.
	Token                  string
	ClientID, ClientSecret string
	// CPU, when set, is sampled right before and after the load (after
	// Setup).
	CPU *cpuProbe
}

// Result summarises a run.
type Result struct {
	Requests, Errors uint64
	Elapsed          time.Duration
	P50, P90, P99    time.Duration
	Max              time.Duration
	FirstError       string
}

func (r Result) String() string {
	rps := float64(r.Requests) / r.Elapsed.Seconds()
	s := fmt.Sprintf("requests %d in %s: %.0f req/s; latency p50 %s p90 %s p99 %s max %s; errors %d",
		r.Requests, r.Elapsed.Round(time.Millisecond), rps, r.P50, r.P90, r.P99, r.Max, r.Errors)
	if r.FirstError != "" {
		s += " (first: " + r.FirstError + ")"
	}
	return s
}

// Run executes a scenario; every worker goroutine ends when the deadline
// passes or the request budget is spent.
func Run(o Options, sc Scenario) (Result, error) {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	client := &fasthttp.Client{MaxConnsPerHost: o.Concurrency * 2, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	creds.Store(clientCreds{o.ClientID, o.ClientSecret})
	authz.Store("")
	switch {
	case o.Token != "":
		authz.Store("Bearer " + o.Token)
	case o.ClientID != "":
		tok, err := fetchToken(client, o.Base)
		if err != nil {
			return Result{}, err
		}
		authz.Store("Bearer " + tok)
	}
	if sc.Setup != nil {
		if err := sc.Setup(client, o.Base); err != nil {
			return Result{}, fmt.Errorf("scenario setup: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration)
	defer cancel()
	var (
		sent, errs atomic.Uint64
		firstErr   atomic.Value
		wg         sync.WaitGroup
		lat        = make([][]time.Duration, o.Concurrency)
	)
	if o.CPU != nil {
		o.CPU.start()
	}
	start := time.Now()
	for w := 0; w < o.Concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			samples := make([]time.Duration, 0, 1<<16)
			base := o.Base
			if len(o.Bases) > 0 {
				base = o.Bases[w%len(o.Bases)]
			}
			for ctx.Err() == nil {
				seq := sent.Add(1)
				if o.MaxRequests > 0 && seq > o.MaxRequests {
					sent.Add(^uint64(0))
					break
				}
				req.Reset()
				sc.Build(req, base, w, seq)
				if !sc.Public {
					setAuth(req)
				}
				t0 := time.Now()
				err := client.Do(req, resp)
				samples = append(samples, time.Since(t0))
				if err != nil || !sc.OK(resp.StatusCode()) {
					errs.Add(1)
					if err == nil {
						err = fmt.Errorf("status %d: %.200s", resp.StatusCode(), resp.Body())
					}
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
			lat[w] = samples
		}(w)
	}
	wg.Wait()
	if o.CPU != nil {
		o.CPU.stop()
	}
	res := Result{Requests: sent.Load(), Errors: errs.Load(), Elapsed: time.Since(start)}
	if s, ok := firstErr.Load().(string); ok {
		res.FirstError = s
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))]
	}
	res.P50, res.P90, res.P99 = pct(0.50), pct(0.90), pct(0.99)
	if len(all) > 0 {
		res.Max = all[len(all)-1]
	}
	return res, nil
}
