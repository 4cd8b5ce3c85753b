package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"svc/model"
	"svc/platform/config"
	"svc/sqlschema"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/modelcache"
	"svc/storage/postgres"
	"svc/storage/sqlite"
	"svc/streamdata"
)

// stores are the storage engines the service runs on, chosen by
// SVC_STORAGE_BACKEND.
type stores struct {
	Models storage.Models
	// Entities holds entities and their revisions.
	Entities storage.Entities
	// Audits reads the audit trail Entities writes with each change.
	Audits storage.Audits
	// Tasks reads and claims the scheduled tasks Entities arms.
	Tasks storage.ScheduledTasks
	// IAM holds the jwt-mode stores.
	IAM storage.IAMStores
	// Search, SearchJobs and Messages serve /search and /message.
	Search     storage.Searcher
	SearchJobs storage.SearchJobs
	Messages   storage.Messages
	// SQLSchemas stores SQL schemas; SQLRunner queries their views.
	SQLSchemas storage.SQLSchemas
	SQLRunner  storage.SQLRunner
	// StreamConfigs and StreamIndexes serve /platform-api/stream-data;
	// StreamPager and StreamExplain are the engine's keyset pages and
	// plans (nil on memory: pages are cut from a sorted scan).
	StreamConfigs storage.StreamConfigs
	StreamIndexes storage.StreamIndexes
	StreamPager   storage.StreamPager
	StreamExplain streamdata.Explainer
	// Changes is the change log Entities writes; Subscriptions the
	// change feed's subscriptions.
	Changes       storage.ChangeLog
	Subscriptions storage.Subscriptions
	// Webhooks holds webhook subscriptions' secrets and delivery state.
	Webhooks storage.Webhooks
	// Keys are the idempotency keys Entities stamps in its commits.
	Keys storage.IdempotencyKeys
	// Ready reports whether storage can serve, for /readyz.
	Ready func() bool
	// Pool snapshots the connection pool for /metrics (nil on memory).
	Pool  func() storage.PoolStats
	Close func()
}

func postgresOptions(cfg *config.Config) postgres.Options {
	return postgres.Options{
		URL: cfg.PostgresURL, MaxConns: cfg.PostgresMaxConns, MinConns: cfg.PostgresMinConns,
		MaxConnIdleTime: cfg.PostgresMaxConnIdleTime, AcquireTimeout: cfg.PostgresAcquireTimeout,
		StatementTimeout: cfg.PostgresStatementTimeout, IdleInTxTimeout: cfg.PostgresIdleInTxTimeout,
		AutoMigrate: cfg.PostgresAutoMigrate, MigrateLockWait: cfg.PostgresMigrateLockTimeout,
		SQLMaxConns: cfg.SQLMaxConnections, SQLMaxConnsPerTenant: cfg.SQLMaxConnectionsPerTenant,
	}
}

// sqlSchemaService is the SQL Schema API over st with cfg's bounds.
func sqlSchemaService(cfg *config.Config, st *stores) *sqlschema.Service {
	return sqlschema.New(st.SQLSchemas, st.Models, st.SQLRunner, model.ID, cfg.SQLQueryTimeout).
		WithMaxSchemas(cfg.SQLMaxSchemasPerTenant)
}

// moveLegacySQLSchemas gives each SQL schema saved before it had a
// PostgreSQL database of its own one (docs/decisions/0033-sql-tenant-isolation.md),
// in the background at start: until then its role still logs in to svc's
// database. Every node tries; a schema another node is moving at the same
// time fails here and is done there. Failures are logged and tried again
// at the next start.
func moveLegacySQLSchemas(ctx context.Context, s *sqlschema.Service, log *slog.Logger) {
	n, err := s.MoveLegacy(ctx)
	if n > 0 {
		log.Info("SQL schemas moved to databases of their own", "moved", n)
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("SQL schemas left in svc's database; tried again at the next start", "moved", n, "error", err)
	}
}

func sqliteOptions(cfg *config.Config) sqlite.Options {
	return sqlite.Options{Path: cfg.SQLiteFile(), AutoMigrate: cfg.SQLiteAutoMigrate, BusyTimeout: cfg.SQLiteBusyTimeout,
		CacheSizeKiB: cfg.SQLiteCacheSize, SearchScanLimit: cfg.SQLiteSearchScanLimit}
}

// openStorage starts the configured engine within SVC_STARTUP_TIMEOUT.
func openStorage(cfg *config.Config) (*stores, error) {
	switch cfg.StorageBackend {
	case "postgres":
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		defer cancel()
		db, err := postgres.Open(ctx, postgresOptions(cfg))
		if err != nil {
			return nil, err
		}
		if !cfg.PostgresAutoMigrate {
			// Without migrations at start, serving an older schema would
			// fail request by request; refuse once, saying what to do.
			n, err := db.Pending(ctx)
			if err != nil {
				db.Close()
				return nil, err
			}
			if n > 0 {
				db.Close()
				return nil, fmt.Errorf("the database lacks %d of this version's migrations and SVC_POSTGRES_AUTO_MIGRATE is false: run `svc migrate` first, or set SVC_POSTGRES_AUTO_MIGRATE=true", n)
			}
		}
		iamStores := storage.IAMStores{Clients: db.M2MClients(), Keypairs: db.Keypairs(),
			TrustedKeys: db.TrustedKeys(), Providers: db.OIDCProviders(), Revocations: db.RevokedTokens()}
		sqlStore := db.SQLSchemas(cfg.SQLQueryTimeout)
		return &stores{
			SQLSchemas: sqlStore,
			SQLRunner:  sqlStore,
			Models:     modelStore(cfg, db.Models()),
			Entities:   db.Entities(),
			Changes:    db.Changes(), Subscriptions: db.Subscriptions(), Webhooks: db.Webhooks(),
			Keys:   db.IdempotencyKeys(),
			Audits: db.Audits(),
			Tasks:  db.Tasks(),
			IAM:    iamStores,

			Search:     db.Search(cfg.PostgresSearchStatementTimeout),
			SearchJobs: db.SearchJobs(),
			Messages:   db.Messages(),

			StreamConfigs: db.StreamConfigs(),
			StreamIndexes: db.StreamIndexes(),
			StreamPager:   db.Search(cfg.PostgresSearchStatementTimeout),
			StreamExplain: db.Search(cfg.PostgresSearchStatementTimeout),
			Ready: newCachedReady(func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.PostgresAcquireTimeout+1)
				defer cancel()
				return db.Ping(ctx) == nil
			}, readyTTL).Ready,
			Pool:  db.PoolStats,
			Close: db.Close,
		}, nil
	case "sqlite":
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		defer cancel()
		db, err := sqlite.Open(ctx, sqliteOptions(cfg))
		if err != nil {
			return nil, err
		}
		sqlStore := db.SQLSchemas()
		search := db.Search()
		return &stores{
			SQLSchemas: sqlStore, SQLRunner: sqlStore,
			Models:   modelStore(cfg, db.Models()),
			Entities: db.Entities(), Audits: db.Audits(), Tasks: db.Tasks(),
			Changes: db.Changes(), Subscriptions: db.Subscriptions(), Webhooks: db.Webhooks(),
			Keys:   db.IdempotencyKeys(),
			IAM:    db.IAMStores(),
			Search: search, SearchJobs: db.SearchJobs(), Messages: db.Messages(),
			StreamConfigs: db.StreamConfigs(), StreamIndexes: db.StreamIndexes(),
			Ready: newCachedReady(func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				return db.Ping(ctx) == nil
			}, readyTTL).Ready,
			Pool:  db.PoolStats,
			Close: db.Close,
		}, nil
	case "memory":
		ents := memory.NewEntities()
		sqlStore := memory.NewSQLSchemas()
		// The collector's headroom follows the heap that is not stored
		// documents (memory.TuneGC; issue 14); an operator's GOGC wins.
		closeStore := func() {}
		if os.Getenv("GOGC") == "" {
			closeStore = ents.TuneGC(100, time.Second)
		}
		return &stores{SQLSchemas: sqlStore, SQLRunner: sqlStore, Models: memory.NewModels(), Entities: ents, Audits: ents.Audits(), Tasks: ents.Tasks(), IAM: memory.NewIAMStores(),
			Changes: ents.Changes(), Subscriptions: memory.NewSubscriptions(), Webhooks: memory.NewWebhooks(), Keys: ents.Keys(), Ready: func() bool { return true }, Close: closeStore,
			Search: memory.NewSearch(ents), SearchJobs: memory.NewSearchJobs(), Messages: memory.NewMessages(),
			StreamConfigs: memory.NewStreamConfigs(), StreamIndexes: memory.NewStreamIndexes()}, nil
	}
	return nil, fmt.Errorf("unknown storage backend %q", cfg.StorageBackend)
}

// modelStore serves model records from process memory on a single node:
// this process's writes invalidate them (issue 14). In cluster mode another
// node's lock or change level must be seen by this node's next write, which
// a broadcast (delivered a moment later) cannot promise, so every read goes
// to the database there and the broadcast only drops decoded copies.
func modelStore(cfg *config.Config, db storage.Models) storage.Models {
	if cfg.ClusterEnabled {
		return db
	}
	return modelcache.New(db, cfg.ModelCacheLease)
}
