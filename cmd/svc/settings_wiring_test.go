package main

import (
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"svc/iam/federation"
	"svc/platform/config"
	"svc/platform/netguard"
	"svc/scheduler"
	"svc/search"
	"svc/storage/memory"
	"svc/storage/postgres"
	"svc/storage/sqlite"
)

// TestSettingsReachTheirOptions loads distinct non-default values for the
// settings whose effect is shown by a package's own test (on the options
// struct it consumes) and checks serve hands each value to the right
// field: the link between the variable and that test. A swapped or
// dropped field fails here.
func TestSettingsReachTheirOptions(t *testing.T) {
	env := map[string]string{
		"SVC_POSTGRES_URL": "postgres://u@127.0.0.1:1/db", "SVC_POSTGRES_MAX_CONNS": "31", "SVC_POSTGRES_MIN_CONNS": "7",
		"SVC_POSTGRES_MAX_CONN_IDLE_TIME": "41s", "SVC_POSTGRES_ACQUIRE_TIMEOUT": "42s", "SVC_POSTGRES_STATEMENT_TIMEOUT": "43s",
		"SVC_POSTGRES_IDLE_IN_TX_TIMEOUT": "44s", "SVC_POSTGRES_AUTO_MIGRATE": "false", "SVC_POSTGRES_MIGRATE_LOCK_TIMEOUT": "45s",
		"SVC_SQL_MAX_CONNECTIONS": "13", "SVC_SQL_MAX_CONNECTIONS_PER_TENANT": "3", "SVC_SQL_MAX_SCHEMAS_PER_TENANT": "5",

		"SVC_SEARCH_MAX_SORT_KEYS": "3", "SVC_SEARCH_ASYNC_WORKERS": "5", "SVC_SEARCH_ASYNC_QUEUE": "17",
		"SVC_SEARCH_ASYNC_MAX_PER_TENANT": "4", "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "11s", "SVC_SEARCH_JOB_STALE_AFTER": "61s",
		"SVC_SEARCH_JOB_MAX_ATTEMPTS": "6", "SVC_SEARCH_SNAPSHOT_TTL": "71m", "SVC_SEARCH_REAP_INTERVAL": "13s",

		"SVC_OIDC_ROLES_CLAIM": "realm_access.roles", "SVC_OIDC_REQUIRE_HTTPS": "false", "SVC_OIDC_ALLOW_PRIVATE_NETWORKS": "true",
		"SVC_OIDC_CONNECT_TIMEOUT_MS": "1001", "SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS": "1002", "SVC_OIDC_SOCKET_TIMEOUT_MS": "1003",
		"SVC_AUTH_CACHE_RECONCILE_INTERVAL": "9s",

		"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED": "true", "SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES": "12",
		"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT": "8", "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS": "9",
		"SVC_JWT_ISSUER": "https://iss.example", "SVC_JWT_AUDIENCE": "aud-x",

		"SVC_SCHEDULER_SCAN_INTERVAL": "3s", "SVC_SCHEDULER_BATCH_SIZE": "77", "SVC_SCHEDULER_REDISPATCH_BACKOFF": "19s",
		"SVC_SCHEDULER_EXPIRY_GRACE": "23s",

		"SVC_SQLITE_PATH": "/var/lib/svc/x.db", "SVC_SQLITE_AUTO_MIGRATE": "false", "SVC_SQLITE_BUSY_TIMEOUT": "47s",
		"SVC_SQLITE_CACHE_SIZE": "4321", "SVC_SQLITE_SEARCH_SCAN_LIMIT": "99",

		"SVC_CHANGEFEED_RETENTION": "5h", "SVC_CHANGEFEED_BACKLOG_MAX_EVENTS": "77", "SVC_CHANGEFEED_SUBSCRIPTION_TTL": "6h",
		"SVC_CHANGEFEED_SWEEP_INTERVAL": "7s", "SVC_CHANGEFEED_LIVE_BUFFER": "333", "SVC_CHANGEFEED_STALL_TIMEOUT": "11s",
		"SVC_CHANGEFEED_LIVE_LEASE": "12s",

		"SVC_IDEMPOTENCY_RETENTION": "7h",
	}
	cfg, err := config.Load(config.Source{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	if got, want := postgresOptions(cfg), (postgres.Options{URL: "postgres://u@127.0.0.1:1/db", MaxConns: 31, MinConns: 7,
		MaxConnIdleTime: 41 * time.Second, AcquireTimeout: 42 * time.Second, StatementTimeout: 43 * time.Second,
		IdleInTxTimeout: 44 * time.Second, AutoMigrate: false, MigrateLockWait: 45 * time.Second,
		SQLMaxConns: 13, SQLMaxConnsPerTenant: 3}); got != want {
		t.Errorf("postgres options:\n got %+v\nwant %+v", got, want)
	}

	if got := sqlSchemaService(cfg, &stores{}).MaxSchemas(); got != 5 {
		t.Errorf("SQL schema service: SVC_SQL_MAX_SCHEMAS_PER_TENANT reached it as %d, want 5", got)
	}

	if got, want := sqliteOptions(cfg), (sqlite.Options{Path: "/var/lib/svc/x.db", AutoMigrate: false, BusyTimeout: 47 * time.Second,
		CacheSizeKiB: 4321, SearchScanLimit: 99}); got != want {
		t.Errorf("sqlite options:\n got %+v\nwant %+v", got, want)
	}

	idem, stopIdem := startIdempotency(cfg, memory.NewEntities().Keys(), log)
	stopIdem()
	if got := idem.Retention(); got != 7*time.Hour {
		t.Errorf("idempotency: SVC_IDEMPOTENCY_RETENTION reached it as %s, want 7h", got)
	}

	so := searchOptions(cfg, log)
	so.OnBackgroundErr = nil
	if want := (search.Options{MaxSortKeys: 3, Workers: 5, Queue: 17, MaxPerTenant: 4, Heartbeat: 11 * time.Second,
		StaleAfter: 61 * time.Second, MaxAttempts: 6, SnapshotTTL: 71 * time.Minute, ReapInterval: 13 * time.Second}); !reflect.DeepEqual(so, want) {
		t.Errorf("search options:\n got %+v\nwant %+v", so, want)
	}

	pc := providersConfig(cfg, log)
	if pc.RolesClaim != "realm_access.roles" || pc.RequireHTTPS || pc.ReconcileInterval != 9*time.Second ||
		pc.Net != (netguard.Options{AllowPrivate: true, ConnectTimeout: 1001 * time.Millisecond,
			PoolTimeout: 1002 * time.Millisecond, ReadTimeout: 1003 * time.Millisecond}) {
		t.Errorf("OIDC providers config: %+v", pc)
	}

	sc := schedulerOptions(cfg, log)
	sc.Log = nil
	if want := (scheduler.Options{ScanInterval: 3 * time.Second, BatchSize: 77, RedispatchBackoff: 19 * time.Second,
		ExpiryGrace: 23 * time.Second}); !reflect.DeepEqual(sc, want) {
		t.Errorf("scheduler options:\n got %+v\nwant %+v", sc, want)
	}

	fo := feedOptions(cfg, log, nil)
	if fo.Retention != 5*time.Hour || fo.BacklogMaxEvents != 77 || fo.DefaultTTL != 6*time.Hour {
		t.Errorf("change feed options: %+v", fo)
	}
	if ho := feedHubOptions(cfg, log); ho.Touch != 7*time.Second || ho.Buffer != 333 || ho.Stall != 11*time.Second {
		t.Errorf("change feed hub options: touch %s buffer %d stall %s, want the sweep interval 7s, 333, 11s", ho.Touch, ho.Buffer, ho.Stall)
	}
	if r := feedLiveRefresh(cfg); r != 3*time.Second {
		t.Errorf("change feed live refresh %s, want a quarter of SVC_CHANGEFEED_LIVE_LEASE (12s)", r)
	}

	tc := trustedConfig(cfg, log)
	tc.Log = nil
	if want := (federation.TrustedConfig{Enabled: true, MaxJWKProps: 12, MaxPerTenant: 8, DefaultValidity: 9 * 24 * time.Hour,
		Issuer: "https://iss.example", Audience: "aud-x", ReconcileInterval: 9 * time.Second}); !reflect.DeepEqual(tc, want) {
		t.Errorf("trusted-key config:\n got %+v\nwant %+v", tc, want)
	}
}
