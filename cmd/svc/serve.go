package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"svc/audit"
	"svc/changefeed"
	"svc/cluster/invalidate"
	"svc/compute/changes"
	"svc/compute/crud"
	"svc/entity"
	"svc/fast"
	"svc/help"
	"svc/model"
	"svc/platform/config"
	"svc/platform/opmetrics"
	"svc/platform/switches"
	"svc/platform/telemetry"
	"svc/scheduler"
	"svc/search"
	"svc/storage/overlay"
	"svc/streamdata"
	"svc/traced"
	"svc/workflow"
)

func serve() int {
	cfg, ok := loadConfig(os.Stderr)
	if !ok {
		return 1
	}
	log, level := newLeveledLogger(cfg, os.Stdout)
	// The runtime switches ({ctx}/admin/log-level, /admin/trace-sampler):
	// the sampler starts from the standard OTEL_TRACES_SAMPLER variables.
	initialSampler, samplerWarning := switches.SamplerFromEnv(os.Getenv)
	if samplerWarning != "" && cfg.OTelEnabled {
		log.Warn(samplerWarning)
	}
	sw := switches.New(level, initialSampler, log)
	var tel *telemetry.T // nil unless SVC_OTEL_ENABLED: nothing traced, nothing paid
	var err error
	if cfg.OTelEnabled {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		tel, err = telemetry.Start(sctx, version, telemetry.WithSampler(sw.Sampler()))
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "svc: SVC_OTEL_ENABLED: %v\n", err)
			return 1
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tel.Shutdown(sctx); err != nil {
				log.Warn("telemetry: flushing at shutdown", "error", err)
			}
		}()
	}
	// The one metrics pipeline: HTTP, storage, dispatch and gRPC latency
	// in the set the admin listener's /metrics writes
	// (docs/decisions/0039-one-metrics-pipeline.md).
	metricSet := metrics.NewSet()
	ops := opmetrics.New(metricSet)
	st, err := openStorage(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: storage: %v\n", err)
		return 1
	}
	defer st.Close()
	// Membership: every part below that needs the other nodes gets its
	// cluster.Directory / cluster.Bus from cl.
	cl, err := startCluster(cfg, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: cluster: %v\n", err)
		return 1
	}
	defer cl.Close()
	st.IAM = invalidate.AnnounceIAM(st.IAM, cl, log)
	switchBus, stopSwitches := switches.Join(sw, cl, cl.Self().ID)
	defer stopSwitches()
	// Construction order (docs/ARCHITECTURE.md): the compute server first
	// (it only dispatches until it listens), then the domain services that
	// dispatch to it, then the adapters over them; nothing is wired back
	// with a setter.
	// Routing tokens: the cluster secret in cluster mode, a secret of
	// this process alone on a single node (docs/decisions/0015-transactions.md).
	tokens, err := txTokens(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	fed, err := newFederation(cfg, st, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	defer fed.close()
	var jwt *jwtMode
	if cfg.IAMMode == "jwt" {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		jwt, err = startJWT(sctx, cfg, st.IAM, fed.externals(), log)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "svc: jwt mode: %v\n", err)
			return 1
		}
		// Warned only once jwt mode has started, so a start that fails
		// still says one thing, its reason.
		if w := issuerWarning(cfg); w != "" {
			log.Warn(w)
		}
		defer jwt.Close()
		fed.onChange(jwt.cache.Purge)
	}
	// The node-to-node route (nil with clustering off), then the compute
	// server forwarding through it, then the route serving other nodes'
	// dispatches to this one's members and the transaction routers.
	pr, err := newPeers(cfg, cl, tokens)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: cluster: %v\n", err)
		return 1
	}
	defer pr.close()
	grpcSrv, err := newCompute(cfg, jwt, tel, ops, pr, cl, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	defer grpcSrv.Stop()
	xn := newCrossNode(cfg, cl, tokens, pr, grpcSrv)
	defer xn.close()
	dispatcher := traced.Dispatch(tel, ops, grpcSrv)
	// Function conditions of search, grouped stats and delete by
	// condition go to the same members as workflow processors.
	so := searchOptions(cfg, log)
	so.Dispatcher = dispatcher
	searchSvc := search.New(st.Models, st.Search, st.SearchJobs, so)
	searchSvc.Start()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		searchSvc.Stop(sctx)
	}()
	// The entity service gates writes through modelSvc (Admit); modelSvc
	// counts entities (unlock, delete) in the store the entity service
	// reads, with the joined transaction's writes over it.
	// The change feed: the Recorder sits on the engine, so every commit
	// of a watched model carries its events into the engine's transaction.
	feed, err := startChangeFeed(cfg, st, cl, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	defer feed.stop()
	entities := overlay.Entities(traced.Entities(tel, ops, cfg.StorageBackend, changefeed.NewRecorder(st.Entities, feed.watched, feed.committed)))
	modelSvc := model.New(st.Models, model.StoreCounter{Store: entities}, model.WithMaxRetries(cfg.SchemaExtendMaxRetries),
		model.WithCacheLease(cfg.ModelCacheLease))
	engine := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), MaxStateVisits: cfg.MaxStateVisits, Log: log,
		Dispatcher: dispatcher}
	ew := entity.NewEngineWorkflow(engine)
	entitySvc := entity.New(entities, st.Models, entity.GateOf(modelSvc),
		entity.WithGroupMax(cfg.StatsGroupMax), entity.WithMaxPerRequest(cfg.MaxEntitiesPerRequest), entity.WithXML(entity.XMLToJSON),
		entity.WithWorkflow(ew), entity.WithConditions(searchSvc),
		entity.WithTasks(st.Tasks), entity.WithTxTokens(tokens))
	idem, stopIdem := startIdempotency(cfg, st.Keys, log)
	defer stopIdem()
	sqlSvc := sqlSchemaService(cfg, st)
	deps := fast.Deps{
		Telemetry:  tel,
		Metrics:    metricSet,
		Help:       help.Default().WithVersion(version),
		Version:    version,
		Log:        log,
		Ready:      st.Ready,
		Pool:       st.Pool,
		Membership: cl.Report,
		Models:     st.Models,
		Model:      modelSvc,

		Entities:    entitySvc,
		Idempotency: idem,
		Search:      searchSvc,
		Messages:    st.Messages,
		Audit:       audit.New(st.Audits, st.Entities),
		SQLSchema:   sqlSvc,

		TrustedKeys: fed.Trusted,
		OIDC:        fed.Providers,
		Cluster:     xn.httpDeps(),
		Switches:    sw,
		SwitchBus:   switchBus,

		Changes:   feed.svc,
		ChangeHub: feed.hub,
	}
	if jwt != nil {
		deps.Auth, deps.IAM = fast.HeaderAuth{A: jwt.auth}, jwt.deps
	}
	if st.StreamConfigs != nil {
		deps.StreamData = streamdata.New(streamdata.Deps{Configs: st.StreamConfigs, Indexes: st.StreamIndexes,
			Models: st.Models, Planner: searchSvc, Searcher: st.Search, Pager: st.StreamPager, Deleter: entitySvc,
			Explain: st.StreamExplain})
	}
	defer wireClusterWide(cl, modelSvc, ew.Sets, st.Models, fed, jwt, cfg.StartupTimeout, log)()
	srv, err := fast.New(cfg, deps)
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	// The change feed's gRPC door shares the compute listener.
	changes.New(feed.hub, verifier(cfg, jwt, log), changes.Options{Log: log}).Register(grpcSrv)
	if err := listenCompute(grpcSrv, cfg, jwt, log, crud.Services{Entities: entitySvc, Models: modelSvc, Search: searchSvc}); err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	// Scheduled transitions fire from here; function schedules and
	// processors need the dispatcher above.
	stopSched := func() {}
	if cfg.SchedulerEnabled {
		so := schedulerOptions(cfg, log)
		attach := clusterScheduler(cfg, cl, &so)
		sched := scheduler.New(st.Tasks, entitySvc, so)
		sched.Start()
		detach := attach(sched)
		stopSched = func() {
			detach()
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := sched.Stop(sctx); err != nil {
				log.Warn("scheduled transitions: fires cancelled at shutdown", "error", err)
			}
		}
		defer stopSched()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGPIPE)
	fed.run(ctx)
	go moveLegacySQLSchemas(ctx, sqlSvc, log)

	// Streams end before the HTTP drain waits on them: each gets its
	// final event and resumes on another node (or this one, restarted).
	go func() {
		<-ctx.Done()
		feed.hub.Stop()
	}()
	// A second signal during the drain forces exit.
	go func() {
		<-ctx.Done()
		stop()
		hard := make(chan os.Signal, 1)
		signal.Notify(hard, os.Interrupt, syscall.SIGTERM)
		<-hard
		fmt.Fprintln(os.Stderr, "svc: hard exit forced by second signal")
		os.Exit(2)
	}()

	err = srv.Serve(ctx, func(api, admin net.Addr) {
		if !cfg.SuppressBanner {
			printBanner(os.Stderr, cfg, api, admin)
			jwt.printKeyWarnings(os.Stderr, time.Now())
		}
		log.Info("listening", "api", api.String(), "admin", admin.String())
	})
	// Drain order: HTTP first (Serve returns after it), then the
	// scheduler's fires (they may still call members), then gRPC members.
	stopSched()
	grpcSrv.Stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	log.Info("shutdown complete")
	return 0
}

// schedulerOptions maps the SVC_SCHEDULER_* settings onto the scheduler.
func schedulerOptions(cfg *config.Config, log *slog.Logger) scheduler.Options {
	return scheduler.Options{ScanInterval: cfg.SchedulerScanInterval, BatchSize: cfg.SchedulerBatchSize,
		RedispatchBackoff: cfg.SchedulerRedispatchBackoff, ExpiryGrace: cfg.SchedulerExpiryGrace, Log: log}
}

// issuerWarning is the start-up warning of a jwt-mode issuer that is not
// an https URL: RFC 8414 metadata validators (OAuth client libraries)
// require the issuer to be the https URL the metadata is served under, and
// reject svc's default "svc". Empty when there is nothing to say.
func issuerWarning(cfg *config.Config) string {
	if cfg.IAMMode != "jwt" || strings.HasPrefix(cfg.JWTIssuer, "https://") {
		return ""
	}
	return fmt.Sprintf("SVC_JWT_ISSUER is %q, not an https URL: OAuth libraries that validate the RFC 8414 metadata "+
		"(/.well-known/oauth-authorization-server) reject it; set SVC_JWT_ISSUER to the https URL clients reach svc at, "+
		"with the context path, e.g. https://svc.example.com%s", cfg.JWTIssuer, cfg.ContextPath)
}

// newLogger builds the process logger: SVC_LOG_FORMAT picks slog's text or
// JSON handler, SVC_LOG_LEVEL its level.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	log, _ := newLeveledLogger(cfg, w)
	return log
}

// newLeveledLogger is newLogger with the level the handler reads, which
// POST {ctx}/admin/log-level changes at run time.
func newLeveledLogger(cfg *config.Config, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	v := new(slog.LevelVar)
	v.Set(lvl)
	opts := &slog.HandlerOptions{Level: v}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), v
	}
	return slog.New(slog.NewTextHandler(w, opts)), v
}

func printBanner(w io.Writer, cfg *config.Config, api, admin net.Addr) {
	ctxPath := cfg.ContextPath
	if ctxPath == "" {
		ctxPath = "(root)"
	}
	fmt.Fprintf(w, "svc %s (%s) built %s\n", version, commit, buildDate)
	fmt.Fprintf(w, "  HTTP %s | admin %s | gRPC %s | context path %s | IAM %s | storage %s\n",
		api, admin, net.JoinHostPort(cfg.GRPCListenHost(), fmt.Sprint(cfg.GRPCPort)), ctxPath, cfg.IAMMode, cfg.StorageBackend)
	fmt.Fprintf(w, "  listening on %s (HTTP, SVC_HTTP_BIND_ADDRESS) and %s (gRPC, SVC_GRPC_BIND_ADDRESS)\n",
		config.DescribeHost(cfg.HTTPListenHost()), config.DescribeHost(cfg.GRPCListenHost()))
	switch cfg.StorageBackend {
	case "sqlite":
		fmt.Fprintf(w, "  data: %s (SQLite; SVC_SQLITE_PATH; back up with `svc backup --to FILE`)\n", cfg.SQLiteFile())
	case "memory":
		fmt.Fprintln(w, "  data: in memory only, lost when svc stops (`svc init` selects SQLite storage that is kept)")
	}
	if cfg.OTelEnabled {
		ep := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if ep == "" {
			ep = "the exporter's default"
		}
		fmt.Fprintf(w, "  OpenTelemetry on: traces over OTLP to %s (SVC_OTEL_ENABLED, OTEL_EXPORTER_OTLP_*)\n", ep)
	}
	if cfg.IAMMode == "mock" {
		fmt.Fprintln(w, "  WARNING: MOCK AUTH IS ACTIVE: every request is accepted without authentication.")
		fmt.Fprintln(w, "  Do not expose this instance to untrusted networks; set SVC_IAM_MODE=jwt for real auth.")
	}
}
