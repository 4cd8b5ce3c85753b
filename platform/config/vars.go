package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a variable's value.
type Kind string

const (
	String   Kind = "string"
	Int      Kind = "int"
	Bool     Kind = "bool"
	CSV      Kind = "csv"
	Duration Kind = "duration"
)

// Var describes one SVC_* variable: its name, help group, type, default and
// meaning, and where its value lands in Config. The same table drives
// loading, `svc init`, and the config help topics.
type Var struct {
	Name    string
	Group   string // help topic under config: http, auth, database, ...
	Kind    Kind
	Default string
	Doc     string
	// File marks credentials that accept a NAME_FILE companion.
	File bool
	// Secret values are never printed.
	Secret bool
	// KeepEmpty keeps empty CSV items so validation can reject them.
	KeepEmpty bool

	str *string
	num *int
	flg *bool
	lst *[]string
	dur *time.Duration
}

func (v *Var) set(raw string) error {
	switch v.Kind {
	case String:
		*v.str = raw
	case Int:
		s := strings.TrimSpace(raw)
		if s == "" {
			return fmt.Errorf("must be an integer, got an empty value")
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fmt.Errorf("must be an integer, got %q", raw)
		}
		*v.num = int(n)
	case Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("must be true or false, got %q", raw)
		}
		*v.flg = b
	case CSV:
		*v.lst = splitCSV(raw, v.KeepEmpty)
	case Duration:
		s := strings.TrimSpace(raw)
		if s == "0" {
			*v.dur = 0
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("must be a duration such as 30s or 5m, got %q", raw)
		}
		if d < 0 {
			return fmt.Errorf("must not be negative, got %q", raw)
		}
		*v.dur = d
	}
	return nil
}

func splitCSV(raw string, keepEmpty bool) []string {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	parts := strings.Split(raw, ",")
	out := parts[:0]
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" && !keepEmpty {
			continue
		}
		out = append(out, p)
	}
	return out
}

func str(c *string, name, group, def, doc string) Var {
	return Var{Name: name, Group: group, Kind: String, Default: def, Doc: doc, str: c}
}
func num(c *int, name, group, def, doc string) Var {
	return Var{Name: name, Group: group, Kind: Int, Default: def, Doc: doc, num: c}
}
func flag(c *bool, name, group, def, doc string) Var {
	return Var{Name: name, Group: group, Kind: Bool, Default: def, Doc: doc, flg: c}
}
func list(c *[]string, name, group, def, doc string) Var {
	return Var{Name: name, Group: group, Kind: CSV, Default: def, Doc: doc, lst: c}
}
func dur(c *time.Duration, name, group, def, doc string) Var {
	return Var{Name: name, Group: group, Kind: Duration, Default: def, Doc: doc, dur: c}
}
func secret(v Var) Var { v.File, v.Secret = true, true; return v }

// Groups are the help topics config.<group>, in display order.
var Groups = []string{"http", "storage", "auth", "database", "search", "scheduler", "changefeed", "cluster", "grpc", "cors", "admin"}

// Vars returns the variable table bound to c.
func Vars(c *Config) []Var {
	cors := list(&c.CORSAllowedOrigins, "SVC_CORS_ALLOWED_ORIGINS", "cors", "", "allowed origins, or * for any; empty selects loopback mode (localhost, 127.0.0.1, [::1] on any port)")
	cors.KeepEmpty = true
	return []Var{
		// http: the server itself
		str(&c.ContextPath, "SVC_CONTEXT_PATH", "http", "/api", "URL prefix of every API route; empty mounts the API at the root"),
		num(&c.HTTPPort, "SVC_HTTP_PORT", "http", "8080", "HTTP listener port"),
		dur(&c.HTTPIdleTimeout, "SVC_HTTP_IDLE_TIMEOUT", "http", "2m", "idle keep-alive hold; 0 falls back to the read timeout"),
		dur(&c.HTTPReadHeaderTimeout, "SVC_HTTP_READ_HEADER_TIMEOUT", "http", "10s", "time to receive request headers; 0 falls back to the read timeout"),
		dur(&c.HTTPReadTimeout, "SVC_HTTP_READ_TIMEOUT", "http", "5m", "time to read a whole request including its body; 0 disables"),
		dur(&c.HTTPWriteTimeout, "SVC_HTTP_WRITE_TIMEOUT", "http", "0s", "time from the end of request headers to the end of the response; 0 disables"),
		str(&c.LogLevel, "SVC_LOG_LEVEL", "http", "info", "debug, info, warn or error"),
		str(&c.ErrorResponseMode, "SVC_ERROR_RESPONSE_MODE", "http", "sanitized", "sanitized (5xx carry a generic detail and a ticket) or verbose (internal detail; development only)"),
		dur(&c.ModelCacheLease, "SVC_MODEL_CACHE_LEASE", "http", "5m", "model cache lease: a decoded schema is decoded again after it (jittered by 10 percent; never used past a revision change); on a single PostgreSQL node also the longest its in-process model records serve (its own writes refresh them at once; in cluster mode model records are read from the database on every use); 0 disables expiry"),
		list(&c.Profiles, "SVC_PROFILES", "http", "", "profile names, read from the process environment only; .env.{profile} files load in this order, later ones win"),
		dur(&c.StartupTimeout, "SVC_STARTUP_TIMEOUT", "http", "30s", "deadline for storage and transaction-manager start-up"),
		flag(&c.SuppressBanner, "SVC_SUPPRESS_BANNER", "http", "false", "suppress the startup banner (CI and tests)"),
		num(&c.MaxStateVisits, "SVC_MAX_STATE_VISITS", "http", "10", "workflow cascade visits per state"),
		num(&c.MaxEntitiesPerRequest, "SVC_MAX_ENTITIES_PER_REQUEST", "http", "10000", "extension: most entities one create (array body), collection create or collection update request may carry; more answer 413 `TOO_MANY_ENTITIES`, nothing written; 0 or below means the default"),
		dur(&c.IdempotencyRetention, "SVC_IDEMPOTENCY_RETENTION", "http", "24h", "extension: how long an `Idempotency-Key` of an entity create or transition replays its first answer; above 0"),
		num(&c.StatsGroupMax, "SVC_STATS_GROUP_MAX", "http", "10000", "grouped-stats cardinality and cap on its limit; 0 or below means the default"),
		str(&c.TLSCertFile, "SVC_TLS_CERT_FILE", "http", "", "PEM certificate for TLS on the HTTP and gRPC listeners; needs SVC_TLS_KEY_FILE"),
		str(&c.TLSKeyFile, "SVC_TLS_KEY_FILE", "http", "", "PEM private key for TLS; needs SVC_TLS_CERT_FILE"),
		str(&c.HTTPBindAddress, "SVC_HTTP_BIND_ADDRESS", "http", "", "extension: HTTP listener address; empty is `127.0.0.1` in mock mode and every interface in jwt mode; `*` is every interface"),
		num(&c.HTTPMaxBodyBytes, "SVC_HTTP_MAX_BODY_BYTES", "http", "67108864", "extension: listener body cap in bytes, 413 problem+json above it (operations keep their 10 MiB limits below it)"),
		str(&c.LogFormat, "SVC_LOG_FORMAT", "http", "text", "extension: `text` or `json` log lines (slog)"),
		flag(&c.AccessLog, "SVC_ACCESS_LOG", "http", "false", "extension: one log line per request (method, path, status, bytes, duration, request id, tenant)"),

		// admin
		str(&c.AdminBindAddress, "SVC_ADMIN_BIND_ADDRESS", "admin", "127.0.0.1", "admin listener address (health and metrics)"),
		num(&c.AdminPort, "SVC_ADMIN_PORT", "admin", "9091", "admin listener port"),
		secret(str(&c.MetricsBearer, "SVC_METRICS_BEARER", "admin", "", "static bearer token for GET /metrics")),
		flag(&c.MetricsRequireAuth, "SVC_METRICS_REQUIRE_AUTH", "admin", "false", "require the bearer on /metrics; start-up fails when it is empty"),
		flag(&c.OTelEnabled, "SVC_OTEL_ENABLED", "admin", "false", "traces over OTLP (OpenTelemetry Go SDK), configured by the standard `OTEL_EXPORTER_OTLP_*` variables; metrics are on `/metrics` either way"),
		flag(&c.AdminPprof, "SVC_ADMIN_PPROF", "admin", "false", "extension: Go pprof under `/debug/pprof/` on the admin listener"),

		// cors
		flag(&c.CORSEnabled, "SVC_CORS_ENABLED", "cors", "true", "CORS middleware; false leaves CORS to an upstream ingress"),
		cors,

		// grpc
		num(&c.GRPCPort, "SVC_GRPC_PORT", "grpc", "9090", "gRPC listener port for compute members"),
		str(&c.GRPCBindAddress, "SVC_GRPC_BIND_ADDRESS", "grpc", "", "extension: gRPC listener address; empty is `127.0.0.1` in mock mode and every interface in jwt mode; `*` is every interface"),
		num(&c.KeepaliveInterval, "SVC_KEEPALIVE_INTERVAL", "grpc", "10", "seconds between keep-alive pings to each compute member"),
		num(&c.KeepaliveTimeout, "SVC_KEEPALIVE_TIMEOUT", "grpc", "30", "seconds of silence or write stall before a compute member is evicted"),
		str(&c.ComputeGRPCEndpoint, "SVC_COMPUTE_GRPC_ENDPOINT", "grpc", "", "compute-client side: gRPC endpoint of svc; extension: a comma-separated list of cluster nodes, reconnected to round-robin when a stream is lost"),
		str(&c.ComputeHTTPBase, "SVC_COMPUTE_HTTP_BASE", "grpc", "", "compute-client side: HTTP base URL of svc"),
		secret(str(&c.ComputeToken, "SVC_COMPUTE_TOKEN", "grpc", "", "compute-client side: bearer token")),

		// search
		num(&c.SearchAsyncWorkers, "SVC_SEARCH_ASYNC_WORKERS", "search", "8", "async search worker pool size; at least 1"),
		num(&c.SearchAsyncQueue, "SVC_SEARCH_ASYNC_QUEUE", "search", "256", "async search queue capacity beyond the workers; at least 0"),
		num(&c.SearchAsyncMaxPerTenant, "SVC_SEARCH_ASYNC_MAX_PER_TENANT", "search", "8", "in-flight async jobs per tenant per node; 0 disables the cap"),
		dur(&c.SearchJobHeartbeatInterval, "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL", "search", "15s", "liveness stamp interval of a running job; above 0"),
		num(&c.SearchJobMaxAttempts, "SVC_SEARCH_JOB_MAX_ATTEMPTS", "search", "3", "executions before a job fails; at least 1"),
		dur(&c.SearchJobStaleAfter, "SVC_SEARCH_JOB_STALE_AFTER", "search", "5m", "a RUNNING job without heartbeat for this long is FAILED; at least 4x the heartbeat"),
		dur(&c.SearchReapInterval, "SVC_SEARCH_REAP_INTERVAL", "search", "5m", "snapshot reap interval"),
		dur(&c.SearchSnapshotTTL, "SVC_SEARCH_SNAPSHOT_TTL", "search", "1h", "search snapshot time to live"),
		num(&c.SearchMaxSortKeys, "SVC_SEARCH_MAX_SORT_KEYS", "search", "16", "sort keys per search request; 0 or below means the default"),

		// scheduler
		flag(&c.SchedulerEnabled, "SVC_SCHEDULER_ENABLED", "scheduler", "true", "scheduled-transition scan loop"),
		dur(&c.SchedulerScanInterval, "SVC_SCHEDULER_SCAN_INTERVAL", "scheduler", "1s", "scan cadence"),
		num(&c.SchedulerBatchSize, "SVC_SCHEDULER_BATCH_SIZE", "scheduler", "100", "maximum due tasks per scan"),
		str(&c.SchedulerDistribution, "SVC_SCHEDULER_DISTRIBUTION", "scheduler", "round-robin", "round-robin or self; self when clustering is off"),
		str(&c.SchedulerCoordinator, "SVC_SCHEDULER_COORDINATOR", "scheduler", "lowest-node-id", "the member with the smallest node id scans"),
		dur(&c.SchedulerRedispatchBackoff, "SVC_SCHEDULER_REDISPATCH_BACKOFF", "scheduler", "30s", "re-dispatch throttle after pickup"),
		dur(&c.SchedulerExpiryGrace, "SVC_SCHEDULER_EXPIRY_GRACE", "scheduler", "100ms", "grace above a scheduled transition's timeoutMs before it expires"),

		// changefeed: the change feed's bounds
		dur(&c.ChangeFeedRetention, "SVC_CHANGEFEED_RETENTION", "changefeed", "168h", "extension: change events are kept this long (startFromTimestamp reaches this far back); a durable subscription owing an older event is detached"),
		num(&c.ChangeFeedBacklogMaxEvents, "SVC_CHANGEFEED_BACKLOG_MAX_EVENTS", "changefeed", "1000000", "extension: backlog ceiling: a durable subscription owing more unacknowledged events is detached, and the log keeps at most this many events per tenant and model"),
		dur(&c.ChangeFeedSubscriptionTTL, "SVC_CHANGEFEED_SUBSCRIPTION_TTL", "changefeed", "720h", "extension: default ttl of a durable subscription: with no consumer attached this long it is deleted (a subscription's own `ttl` overrides it)"),
		dur(&c.ChangeFeedSweepInterval, "SVC_CHANGEFEED_SWEEP_INTERVAL", "changefeed", "5m", "extension: how often each node applies the ttl, the backlog ceiling and the retention"),
		num(&c.ChangeFeedLiveBuffer, "SVC_CHANGEFEED_LIVE_BUFFER", "changefeed", "1024", "extension: events queued per live stream (`/changes`, LIVE_ONLY subscriptions); a stream that falls this far behind is cut (SLOW_CONSUMER)"),
		dur(&c.ChangeFeedStallTimeout, "SVC_CHANGEFEED_STALL_TIMEOUT", "changefeed", "30s", "extension: a change-feed consumer that takes nothing for this long is cut: an SSE write not taken, a gRPC send not taken or a full gRPC window with no ack"),
		dur(&c.ChangeFeedLiveLease, "SVC_CHANGEFEED_LIVE_LEASE", "changefeed", "20s", "extension: cluster: how long the other nodes keep recording a node's live-stream models without its renewal (sent every quarter of this)"),
		flag(&c.WebhookAllowPrivateNetworks, "SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "changefeed", "false", "extension: let change-feed webhooks reach loopback, private and link-local addresses (and plain http on loopback); test and development only"),
		dur(&c.WebhookTimeout, "SVC_WEBHOOK_TIMEOUT", "changefeed", "10s", "extension: bound of one change-feed webhook request (connect, TLS, answer)"),
		num(&c.WebhookMaxBatchEvents, "SVC_WEBHOOK_MAX_BATCH_EVENTS", "changefeed", "100", "extension: most change events in one webhook request (a subscription's batching.maxEvents may lower it)"),
		dur(&c.WebhookBackoffMax, "SVC_WEBHOOK_BACKOFF_MAX", "changefeed", "5m", "extension: cap of the exponential retry delay of a failing webhook receiver (from 1s, jittered)"),
		num(&c.WebhookFailingAfter, "SVC_WEBHOOK_FAILING_AFTER", "changefeed", "10", "extension: consecutive failed webhook requests after which the subscription shows failing"),

		// cluster
		flag(&c.ClusterEnabled, "SVC_CLUSTER_ENABLED", "cluster", "false", "multi-node clustering; needs SVC_NODE_ID, SVC_HMAC_SECRET and postgres"),
		str(&c.NodeID, "SVC_NODE_ID", "cluster", "", "this node's id; required when clustering"),
		str(&c.NodeAddr, "SVC_NODE_ADDR", "cluster", "http://localhost:8080", "this node's HTTP base URL including the scheme"),
		str(&c.GRPCNodeAddr, "SVC_GRPC_NODE_ADDR", "cluster", "", "advertised gRPC endpoint host:port"),
		str(&c.GossipAddr, "SVC_GOSSIP_ADDR", "cluster", ":7946", "gossip [host]:port"),
		dur(&c.GossipStabilityWindow, "SVC_GOSSIP_STABILITY_WINDOW", "cluster", "2s", "membership stability window"),
		list(&c.SeedNodes, "SVC_SEED_NODES", "cluster", "", "seed node addresses"),
		secret(str(&c.HMACSecret, "SVC_HMAC_SECRET", "cluster", "", "hex root secret for gossip, dispatch and transaction tokens; 64 hex characters")),
		dur(&c.ProxyTimeout, "SVC_PROXY_TIMEOUT", "cluster", "30s", "request proxy timeout"),
		dur(&c.DispatchWaitTimeout, "SVC_DISPATCH_WAIT_TIMEOUT", "cluster", "5s", "wait for a compute member with matching tags"),
		dur(&c.DispatchForwardTimeout, "SVC_DISPATCH_FORWARD_TIMEOUT", "cluster", "30s", "cross-node forwarding call timeout"),
		dur(&c.TxTokenTTL, "SVC_TX_TOKEN_TTL", "cluster", "1m30s", "transaction routing token lifetime; at least the forward timeout"),

		// database
		// storage: which engine, and the SQLite engine's file
		str(&c.StorageBackend, "SVC_STORAGE_BACKEND", "storage", "memory", "`memory` (zero setup, nothing kept across restarts; the Go collector's headroom follows the part of the heap that is not stored documents, resident size ~1.5 KB per 1 KB entity; setting the runtime's `GOGC` turns that off), `sqlite` (one file on this machine, durable across restarts and crashes; what `svc init` selects) or `postgres` (required for clustering)"),
		str(&c.SQLitePath, "SVC_SQLITE_PATH", "storage", "", "SQLite database file; empty means `$XDG_DATA_HOME/svc/svc.db`, else `~/.local/share/svc/svc.db`; the directory is created 0700; one svc per file (a second one refuses to start)"),
		flag(&c.SQLiteAutoMigrate, "SVC_SQLITE_AUTO_MIGRATE", "storage", "true", "apply pending SQLite migrations at start; false refuses a file missing migrations"),
		dur(&c.SQLiteBusyTimeout, "SVC_SQLITE_BUSY_TIMEOUT", "storage", "5s", "how long a write waits for a write lock another process holds on the file, then 503 retryable; 0 fails at once"),
		num(&c.SQLiteCacheSize, "SVC_SQLITE_CACHE_SIZE", "storage", "64000", "SQLite page cache per connection, KiB; at least 1"),
		num(&c.SQLiteSearchScanLimit, "SVC_SQLITE_SEARCH_SCAN_LIMIT", "storage", "100000", "most rows one direct search examines on SQLite; more answer 400 `SCAN_BUDGET_EXHAUSTED` (async search is not bounded); 0 means no limit"),
		secret(str(&c.PostgresURL, "SVC_POSTGRES_URL", "database", "", "PostgreSQL URL; required with SVC_STORAGE_BACKEND=postgres. pgx defaults to `sslmode=prefer`; for a server on the same host, `?sslmode=disable` (or a Unix socket) saves the TLS work, ~10 % of collection ingest here; a Unix socket (`postgres://user@/db?host=/var/run/postgresql`) also saves ~15 % of svc's and PostgreSQL's CPU per request against TCP loopback (docs/benchmarks-history.md)")),
		dur(&c.PostgresAcquireTimeout, "SVC_POSTGRES_ACQUIRE_TIMEOUT", "database", "10s", "wait for a pooled connection before answering 503; 0 disables"),
		flag(&c.PostgresAutoMigrate, "SVC_POSTGRES_AUTO_MIGRATE", "database", "true", "apply migrations at start; false refuses a database missing migrations (run svc migrate)"),
		dur(&c.PostgresIdleInTxTimeout, "SVC_POSTGRES_IDLE_IN_TX_TIMEOUT", "database", "5m", "idle time inside an open transaction; 0 disables"),
		num(&c.PostgresMaxConns, "SVC_POSTGRES_MAX_CONNS", "database", "25", "maximum pool connections"),
		num(&c.PostgresMinConns, "SVC_POSTGRES_MIN_CONNS", "database", "5", "minimum pool connections"),
		dur(&c.PostgresMaxConnIdleTime, "SVC_POSTGRES_MAX_CONN_IDLE_TIME", "database", "5m", "idle time before a pooled connection closes"),
		dur(&c.PostgresMigrateLockTimeout, "SVC_POSTGRES_MIGRATE_LOCK_TIMEOUT", "database", "5m", "lock wait during migration; 0 disables"),
		dur(&c.PostgresSearchStatementTimeout, "SVC_POSTGRES_SEARCH_STATEMENT_TIMEOUT", "database", "30m", "async search scan ceiling; 0 disables"),
		dur(&c.SQLQueryTimeout, "SVC_SQL_QUERY_TIMEOUT", "database", "30s", "statement timeout of POST /sql/query and of SQL schema login roles"),
		num(&c.SQLMaxConnections, "SVC_SQL_MAX_CONNECTIONS", "database", "10", "extension: most PostgreSQL connections this node holds for POST /sql/query across all tenants (besides its own pool); past it a query answers 503 `SQL_CONNECTIONS_BUSY` with Retry-After"),
		num(&c.SQLMaxConnectionsPerTenant, "SVC_SQL_MAX_CONNECTIONS_PER_TENANT", "database", "4", "extension: most of those connections one tenant holds; past it its query answers 429 `SQL_TENANT_CONNECTIONS_BUSY` with Retry-After"),
		num(&c.SQLMaxSchemasPerTenant, "SVC_SQL_MAX_SCHEMAS_PER_TENANT", "database", "16", "extension: most saved SQL schemas (each a PostgreSQL database and login role) per tenant; one more answers 409 `SQL_SCHEMA_LIMIT_REACHED`"),
		dur(&c.PostgresStatementTimeout, "SVC_POSTGRES_STATEMENT_TIMEOUT", "database", "5m", "single statement maximum; 0 disables"),
		num(&c.SchemaExtendMaxRetries, "SVC_SCHEMA_EXTEND_MAX_RETRIES", "database", "8", "retries on concurrent schema extension"),
		num(&c.SchemaSavepointInterval, "SVC_SCHEMA_SAVEPOINT_INTERVAL", "database", "64", "rows per savepoint during schema extension; svc stores schemas whole, so only 64 is accepted (startup refuses another value)"),

		// auth
		str(&c.IAMMode, "SVC_IAM_MODE", "auth", "mock", "mock (no token needed) or jwt"),
		flag(&c.RequireJWT, "SVC_REQUIRE_JWT", "auth", "false", "refuse to start unless the mode is jwt and a signing key is set"),
		str(&c.MockKind, "SVC_IAM_MOCK_KIND", "auth", "user", "mock mode principal kind: user, service or system"),
		list(&c.MockRoles, "SVC_IAM_MOCK_ROLES", "auth", "ROLE_ADMIN,ROLE_M2M", "mock mode principal roles"),
		secret(str(&c.JWTSigningKey, "SVC_JWT_SIGNING_KEY", "auth", "", "PEM RSA private key (or its base64); required in jwt mode")),
		str(&c.JWTIssuer, "SVC_JWT_ISSUER", "auth", "svc", "iss claim of issued tokens"),
		str(&c.JWTAudience, "SVC_JWT_AUDIENCE", "auth", "", "expected aud of inbound tokens; empty disables the check"),
		num(&c.JWTExpirySeconds, "SVC_JWT_EXPIRY_SECONDS", "auth", "3600", "token lifetime in seconds"),
		str(&c.JWTBootstrapAudience, "SVC_JWT_BOOTSTRAP_AUDIENCE", "auth", "client", "client or human: audience of the bootstrap keypair"),
		str(&c.BootstrapClientID, "SVC_BOOTSTRAP_CLIENT_ID", "auth", "", "bootstrap machine client id; needs SVC_BOOTSTRAP_CLIENT_SECRET"),
		secret(str(&c.BootstrapClientSecret, "SVC_BOOTSTRAP_CLIENT_SECRET", "auth", "", "bootstrap machine client secret; stored as Argon2id (operator-chosen), verified secrets cached as HMACs; start-up warns below 32 characters")),
		list(&c.BootstrapRoles, "SVC_BOOTSTRAP_ROLES", "auth", "ROLE_ADMIN,ROLE_M2M", "roles of the bootstrap client"),
		str(&c.BootstrapTenantID, "SVC_BOOTSTRAP_TENANT_ID", "auth", "default-tenant", "tenant of the bootstrap client; only its `ROLE_ADMIN` manages signing keypairs"),
		str(&c.BootstrapUserID, "SVC_BOOTSTRAP_USER_ID", "auth", "admin", "user id of the bootstrap client"),
		num(&c.KeypairDefaultValidityDays, "SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS", "auth", "365", "validity of bootstrap and issued keypairs, in days"),
		flag(&c.M2MAdminRoleEnabled, "SVC_IAM_M2M_ADMIN_ROLE_ENABLED", "auth", "false", "honour withAdminRole=true on POST /clients"),
		flag(&c.TrustedKeyRegistrationEnabled, "SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED", "auth", "false", "enable /oauth/keys/trusted"),
		num(&c.TrustedKeyMaxJWKProperties, "SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES", "auth", "20", "maximum properties in a registered JWK"),
		num(&c.TrustedKeyMaxPerTenant, "SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT", "auth", "10", "trusted keys per tenant; 0 is unbounded"),
		num(&c.TrustedKeyMaxValidityDays, "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS", "auth", "365", "default validity of a trusted key without validTo, in days"),
		str(&c.OIDCRolesClaim, "SVC_OIDC_ROLES_CLAIM", "auth", "roles", "default roles claim of federated tokens"),
		flag(&c.OIDCRequireHTTPS, "SVC_OIDC_REQUIRE_HTTPS", "auth", "true", "reject non-https discovery URIs"),
		flag(&c.OIDCAllowPrivateNetworks, "SVC_OIDC_ALLOW_PRIVATE_NETWORKS", "auth", "false", "bypass the SSRF blocklist; test and development only"),
		num(&c.OIDCConnectTimeoutMS, "SVC_OIDC_CONNECT_TIMEOUT_MS", "auth", "5000", "TCP connect timeout of discovery and JWKS fetches, ms"),
		num(&c.OIDCConnectionRequestTimeout, "SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS", "auth", "5000", "connection-pool wait of those fetches (16 in flight), ms"),
		num(&c.OIDCSocketTimeoutMS, "SVC_OIDC_SOCKET_TIMEOUT_MS", "auth", "5000", "read timeout of those fetches, ms"),
		dur(&c.AuthCacheReconcileInterval, "SVC_AUTH_CACHE_RECONCILE_INTERVAL", "auth", "1m", "reconcile of key and provider caches, jittered 10 percent; verification fails closed after 10 missed intervals"),
		num(&c.OAuthMaxFailuresPerClient, "SVC_OAUTH_MAX_FAILURES_PER_CLIENT", "auth", "10", "failed client authentications per client id per window before 429; 0 disables"),
		num(&c.OAuthMaxFailuresPerAddress, "SVC_OAUTH_MAX_FAILURES_PER_ADDRESS", "auth", "30", "failed client authentications per source address (IPv6: per /64) per window before 429; 0 disables"),
		dur(&c.OAuthFailureWindow, "SVC_OAUTH_FAILURE_WINDOW", "auth", "1m", "window of the failed-client-authentication limits"),
	}
}
