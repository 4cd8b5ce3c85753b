package config

import (
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// normalize applies the documented clamps and derived defaults before
// validation.
func (c *Config) normalize(explicit map[string]bool) error {
	c.ContextPath = strings.TrimRight(c.ContextPath, "/")
	if c.StatsGroupMax <= 0 {
		c.StatsGroupMax = 10000
	}
	if c.MaxEntitiesPerRequest <= 0 {
		c.MaxEntitiesPerRequest = 10000
	}
	if c.SearchMaxSortKeys <= 0 {
		c.SearchMaxSortKeys = 16
	}
	if c.SchemaSavepointInterval < 1 {
		c.SchemaSavepointInterval = 64
	}
	// The compatible system folds an append-only log of schema deltas into a
	// savepoint row every N deltas; svc stores each model's schema whole
	// (one optimistic write per widening), so there is no log for the
	// interval to act on. A value that asks for different behaviour is
	// refused rather than silently ignored.
	if explicit["SVC_SCHEMA_SAVEPOINT_INTERVAL"] && c.SchemaSavepointInterval != 64 {
		return errf("SVC_SCHEMA_SAVEPOINT_INTERVAL", "svc stores each model's schema whole, with no extension log to fold into savepoints, so only the default 64 is accepted; got %d", c.SchemaSavepointInterval)
	}
	if c.SchemaExtendMaxRetries < 1 {
		c.SchemaExtendMaxRetries = 8
	}
	if !explicit["SVC_SEARCH_ASYNC_MAX_PER_TENANT"] {
		c.SearchAsyncMaxPerTenant = c.SearchAsyncWorkers // the cap tracks the pool
	}
	if len(c.MockRoles) == 0 {
		c.MockRoles = []string{"ROLE_ADMIN", "ROLE_M2M"}
	}
	// Mock authentication answers every caller as an administrator. On an
	// address other machines reach (the container image binds every
	// interface, and `docker run -p` publishes it) that is an open admin
	// API, so it needs SVC_IAM_MODE=mock said explicitly
	// (docs/decisions/0028-listeners-and-operations.md).
	if c.IAMMode == "mock" && !explicit["SVC_IAM_MODE"] {
		for _, l := range []struct{ name, host string }{{"SVC_HTTP_BIND_ADDRESS", c.HTTPListenHost()}, {"SVC_GRPC_BIND_ADDRESS", c.GRPCListenHost()}} {
			if !loopbackHost(l.host) {
				return errf("SVC_IAM_MODE", "mock authentication (the default) accepts every request as an administrator, and %s makes it reachable from other machines (%s); set SVC_IAM_MODE=jwt, or SVC_IAM_MODE=mock explicitly to serve an unauthenticated API there",
					l.name, DescribeHost(l.host))
			}
		}
	}
	if c.LogLevel == "warning" {
		c.LogLevel = "warn"
	}
	if !c.ClusterEnabled {
		c.SchedulerDistribution = "self"
	}
	return nil
}

// Validate enforces every cross-field rule. The first failure is returned
// as an *Error naming the variable.
func (c *Config) Validate() error {
	checks := []func() *Error{
		c.validateServer, c.validateAuth, c.validateCORS, c.validateSearch,
		c.validateScheduler, c.validateChangeFeed, c.validateCluster, c.validateDatabase, c.validateAdmin,
		c.validateWebhooks,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func port(name string, p int) *Error {
	if p < 1 || p > 65535 {
		return errf(name, "must be a port between 1 and 65535, got %d", p)
	}
	return nil
}

func oneOf(name, v string, allowed ...string) *Error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return errf(name, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

func (c *Config) validateServer() *Error {
	if c.IdempotencyRetention <= 0 {
		return errf("SVC_IDEMPOTENCY_RETENTION", "must be above 0, got %s", c.IdempotencyRetention)
	}
	if c.ContextPath != "" && !strings.HasPrefix(c.ContextPath, "/") {
		return errf("SVC_CONTEXT_PATH", "must start with / or be empty, got %q", c.ContextPath)
	}
	if strings.ContainsAny(c.ContextPath, "{}?#* ") {
		return errf("SVC_CONTEXT_PATH", "must be a plain path, got %q", c.ContextPath)
	}
	for _, p := range []struct {
		n string
		v int
	}{{"SVC_HTTP_PORT", c.HTTPPort}, {"SVC_ADMIN_PORT", c.AdminPort}, {"SVC_GRPC_PORT", c.GRPCPort}} {
		if err := port(p.n, p.v); err != nil {
			return err
		}
	}
	if c.HTTPPort == c.AdminPort {
		return errf("SVC_ADMIN_PORT", "must differ from SVC_HTTP_PORT (%d)", c.HTTPPort)
	}
	if err := oneOf("SVC_LOG_LEVEL", c.LogLevel, "debug", "info", "warn", "error"); err != nil {
		return err
	}
	if err := oneOf("SVC_ERROR_RESPONSE_MODE", c.ErrorResponseMode, "sanitized", "verbose"); err != nil {
		return err
	}
	if err := oneOf("SVC_STORAGE_BACKEND", c.StorageBackend, "memory", "sqlite", "postgres"); err != nil {
		return err
	}
	if c.TLSCertFile != "" && c.TLSKeyFile == "" {
		return errf("SVC_TLS_KEY_FILE", "is required when SVC_TLS_CERT_FILE is set")
	}
	if c.TLSKeyFile != "" && c.TLSCertFile == "" {
		return errf("SVC_TLS_CERT_FILE", "is required when SVC_TLS_KEY_FILE is set")
	}
	if c.MaxStateVisits < 1 {
		return errf("SVC_MAX_STATE_VISITS", "must be at least 1, got %d", c.MaxStateVisits)
	}
	if c.StartupTimeout <= 0 {
		return errf("SVC_STARTUP_TIMEOUT", "must be above 0")
	}
	if err := oneOf("SVC_LOG_FORMAT", c.LogFormat, "text", "json"); err != nil {
		return err
	}
	if c.HTTPMaxBodyBytes < 1 {
		return errf("SVC_HTTP_MAX_BODY_BYTES", "must be at least 1, got %d", c.HTTPMaxBodyBytes)
	}
	for _, b := range []struct{ n, v string }{{"SVC_HTTP_BIND_ADDRESS", c.HTTPBindAddress}, {"SVC_GRPC_BIND_ADDRESS", c.GRPCBindAddress}} {
		if b.v != "" && b.v != "*" && net.ParseIP(b.v) == nil && strings.ContainsAny(b.v, ":/ []") {
			return errf(b.n, "must be an IP address, a host name, * or empty, got %q", b.v)
		}
	}
	return nil
}

func (c *Config) validateAuth() *Error {
	if err := oneOf("SVC_IAM_MODE", c.IAMMode, "mock", "jwt"); err != nil {
		return err
	}
	if c.RequireJWT && c.IAMMode != "jwt" {
		return errf("SVC_REQUIRE_JWT", "is true but SVC_IAM_MODE is %q; set SVC_IAM_MODE=jwt", c.IAMMode)
	}
	if c.RequireJWT && c.JWTSigningKey == "" {
		return errf("SVC_REQUIRE_JWT", "is true but SVC_JWT_SIGNING_KEY (or _FILE) is empty")
	}
	if c.IAMMode == "jwt" && c.JWTSigningKey == "" {
		return errf("SVC_JWT_SIGNING_KEY", "is required when SVC_IAM_MODE is jwt")
	}
	if err := oneOf("SVC_IAM_MOCK_KIND", c.MockKind, "user", "service", "system"); err != nil {
		return err
	}
	if err := oneOf("SVC_JWT_BOOTSTRAP_AUDIENCE", c.JWTBootstrapAudience, "client", "human"); err != nil {
		return err
	}
	if c.JWTExpirySeconds < 1 {
		return errf("SVC_JWT_EXPIRY_SECONDS", "must be at least 1, got %d", c.JWTExpirySeconds)
	}
	if c.BootstrapClientID != "" && c.BootstrapClientSecret == "" {
		return errf("SVC_BOOTSTRAP_CLIENT_SECRET", "is required when SVC_BOOTSTRAP_CLIENT_ID is set")
	}
	if c.IAMMode == "jwt" && c.BootstrapClientSecret != "" && c.BootstrapClientID == "" {
		return errf("SVC_BOOTSTRAP_CLIENT_ID", "is required when SVC_BOOTSTRAP_CLIENT_SECRET is set")
	}
	positive := []struct {
		n string
		v int
	}{
		{"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS", c.KeypairDefaultValidityDays},
		{"SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES", c.TrustedKeyMaxJWKProperties},
		{"SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS", c.TrustedKeyMaxValidityDays},
		{"SVC_OIDC_CONNECT_TIMEOUT_MS", c.OIDCConnectTimeoutMS},
		{"SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS", c.OIDCConnectionRequestTimeout},
		{"SVC_OIDC_SOCKET_TIMEOUT_MS", c.OIDCSocketTimeoutMS},
	}
	for _, p := range positive {
		if p.v < 1 {
			return errf(p.n, "must be at least 1, got %d", p.v)
		}
	}
	if c.TrustedKeyMaxPerTenant < 0 {
		return errf("SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT", "must be 0 (unbounded) or more, got %d", c.TrustedKeyMaxPerTenant)
	}
	if c.AuthCacheReconcileInterval <= 0 {
		return errf("SVC_AUTH_CACHE_RECONCILE_INTERVAL", "must be above 0")
	}
	if c.OAuthMaxFailuresPerClient < 0 {
		return errf("SVC_OAUTH_MAX_FAILURES_PER_CLIENT", "must be 0 (off) or more, got %d", c.OAuthMaxFailuresPerClient)
	}
	if c.OAuthMaxFailuresPerAddress < 0 {
		return errf("SVC_OAUTH_MAX_FAILURES_PER_ADDRESS", "must be 0 (off) or more, got %d", c.OAuthMaxFailuresPerAddress)
	}
	if c.OAuthFailureWindow < 1e9 { // one second
		return errf("SVC_OAUTH_FAILURE_WINDOW", "must be at least 1s")
	}
	if strings.TrimSpace(c.OIDCRolesClaim) == "" {
		return errf("SVC_OIDC_ROLES_CLAIM", "must not be empty")
	}
	return nil
}

func (c *Config) validateSearch() *Error {
	if c.SearchAsyncWorkers < 1 {
		return errf("SVC_SEARCH_ASYNC_WORKERS", "must be at least 1, got %d", c.SearchAsyncWorkers)
	}
	if c.SearchAsyncQueue < 0 {
		return errf("SVC_SEARCH_ASYNC_QUEUE", "must be at least 0, got %d", c.SearchAsyncQueue)
	}
	if c.SearchAsyncMaxPerTenant < 0 {
		return errf("SVC_SEARCH_ASYNC_MAX_PER_TENANT", "must be at least 0, got %d", c.SearchAsyncMaxPerTenant)
	}
	if c.SearchJobHeartbeatInterval <= 0 {
		return errf("SVC_SEARCH_JOB_HEARTBEAT_INTERVAL", "must be above 0")
	}
	if c.SearchJobMaxAttempts < 1 {
		return errf("SVC_SEARCH_JOB_MAX_ATTEMPTS", "must be at least 1, got %d", c.SearchJobMaxAttempts)
	}
	if c.SearchJobStaleAfter < 4*c.SearchJobHeartbeatInterval {
		return errf("SVC_SEARCH_JOB_STALE_AFTER", "must be at least 4 times SVC_SEARCH_JOB_HEARTBEAT_INTERVAL (%s), got %s",
			4*c.SearchJobHeartbeatInterval, c.SearchJobStaleAfter)
	}
	if c.SearchReapInterval <= 0 {
		return errf("SVC_SEARCH_REAP_INTERVAL", "must be above 0")
	}
	if c.SearchSnapshotTTL <= 0 {
		return errf("SVC_SEARCH_SNAPSHOT_TTL", "must be above 0")
	}
	return nil
}

func (c *Config) validateChangeFeed() *Error {
	if c.ChangeFeedRetention <= 0 {
		return errf("SVC_CHANGEFEED_RETENTION", "must be above 0")
	}
	if c.ChangeFeedBacklogMaxEvents < 1 {
		return errf("SVC_CHANGEFEED_BACKLOG_MAX_EVENTS", "must be at least 1, got %d", c.ChangeFeedBacklogMaxEvents)
	}
	if c.ChangeFeedSubscriptionTTL <= 0 {
		return errf("SVC_CHANGEFEED_SUBSCRIPTION_TTL", "must be above 0")
	}
	if c.ChangeFeedSweepInterval <= 0 {
		return errf("SVC_CHANGEFEED_SWEEP_INTERVAL", "must be above 0")
	}
	if c.ChangeFeedLiveBuffer < 16 || c.ChangeFeedLiveBuffer > 1_000_000 {
		return errf("SVC_CHANGEFEED_LIVE_BUFFER", "must be 16 to 1000000, got %d", c.ChangeFeedLiveBuffer)
	}
	if c.ChangeFeedStallTimeout < time.Second || c.ChangeFeedStallTimeout > time.Hour {
		return errf("SVC_CHANGEFEED_STALL_TIMEOUT", "must be 1s to 1h, got %s", c.ChangeFeedStallTimeout)
	}
	if c.ChangeFeedLiveLease < 4*time.Second || c.ChangeFeedLiveLease > 10*time.Minute {
		return errf("SVC_CHANGEFEED_LIVE_LEASE", "must be 4s to 10m, got %s", c.ChangeFeedLiveLease)
	}
	return nil
}

func (c *Config) validateScheduler() *Error {
	if c.SchedulerScanInterval <= 0 {
		return errf("SVC_SCHEDULER_SCAN_INTERVAL", "must be above 0")
	}
	if c.SchedulerBatchSize < 1 {
		return errf("SVC_SCHEDULER_BATCH_SIZE", "must be at least 1, got %d", c.SchedulerBatchSize)
	}
	// The backoff is the claim that keeps a picked task from being picked
	// again while it fires: 0 would let every scan fire it anew.
	if c.SchedulerRedispatchBackoff <= 0 {
		return errf("SVC_SCHEDULER_REDISPATCH_BACKOFF", "must be above 0")
	}
	if c.SchedulerExpiryGrace < 0 {
		return errf("SVC_SCHEDULER_EXPIRY_GRACE", "must be 0 or more")
	}
	if err := oneOf("SVC_SCHEDULER_DISTRIBUTION", c.SchedulerDistribution, "round-robin", "self"); err != nil {
		return err
	}
	return oneOf("SVC_SCHEDULER_COORDINATOR", c.SchedulerCoordinator, "lowest-node-id")
}

func (c *Config) validateCluster() *Error {
	if c.KeepaliveInterval < 1 {
		return errf("SVC_KEEPALIVE_INTERVAL", "must be at least 1 second, got %d", c.KeepaliveInterval)
	}
	if c.KeepaliveTimeout < c.KeepaliveInterval {
		return errf("SVC_KEEPALIVE_TIMEOUT", "must be at least SVC_KEEPALIVE_INTERVAL (%d), got %d", c.KeepaliveInterval, c.KeepaliveTimeout)
	}
	if c.TxTokenTTL < c.DispatchForwardTimeout {
		return errf("SVC_TX_TOKEN_TTL", "must be at least SVC_DISPATCH_FORWARD_TIMEOUT (%s), got %s", c.DispatchForwardTimeout, c.TxTokenTTL)
	}
	if !c.ClusterEnabled {
		return nil
	}
	if c.NodeID == "" {
		return errf("SVC_NODE_ID", "is required when SVC_CLUSTER_ENABLED is true")
	}
	if c.HMACSecret == "" {
		return errf("SVC_HMAC_SECRET", "is required when SVC_CLUSTER_ENABLED is true")
	}
	secret, err := hex.DecodeString(c.HMACSecret)
	if err != nil || len(secret) != 32 {
		return errf("SVC_HMAC_SECRET", "must be 64 hex characters (32 bytes)")
	}
	if c.StorageBackend != "postgres" {
		return errf("SVC_CLUSTER_ENABLED", "clustering needs SVC_STORAGE_BACKEND=postgres, got %q", c.StorageBackend)
	}
	u, err := url.Parse(c.NodeAddr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return errf("SVC_NODE_ADDR", "must be an http:// or https:// URL, got %q", c.NodeAddr)
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errf("SVC_NODE_ADDR", "port must be between 1 and 65535, got %q", p)
		}
	}
	_, p, err := net.SplitHostPort(c.GossipAddr)
	if err != nil {
		return errf("SVC_GOSSIP_ADDR", "must be [host]:port, got %q", c.GossipAddr)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return errf("SVC_GOSSIP_ADDR", "port must be between 1 and 65535, got %q", p)
	}
	return nil
}

func (c *Config) validateDatabase() *Error {
	if c.StorageBackend == "postgres" && c.PostgresURL == "" {
		return errf("SVC_POSTGRES_URL", "is required when SVC_STORAGE_BACKEND is postgres")
	}
	if c.SQLiteCacheSize < 1 {
		return errf("SVC_SQLITE_CACHE_SIZE", "must be at least 1 (KiB), got %d", c.SQLiteCacheSize)
	}
	if c.SQLiteSearchScanLimit < 0 {
		return errf("SVC_SQLITE_SEARCH_SCAN_LIMIT", "must be 0 (no limit) or more, got %d", c.SQLiteSearchScanLimit)
	}
	if c.StorageBackend == "sqlite" && c.SQLiteFile() == "" {
		return errf("SVC_SQLITE_PATH", "is required: there is no home directory for the default ~/.local/share/svc/svc.db")
	}
	if c.SQLMaxConnections < 1 {
		return errf("SVC_SQL_MAX_CONNECTIONS", "must be at least 1, got %d", c.SQLMaxConnections)
	}
	if c.SQLMaxConnectionsPerTenant < 1 || c.SQLMaxConnectionsPerTenant > c.SQLMaxConnections {
		return errf("SVC_SQL_MAX_CONNECTIONS_PER_TENANT", "must be between 1 and SVC_SQL_MAX_CONNECTIONS (%d), got %d", c.SQLMaxConnections, c.SQLMaxConnectionsPerTenant)
	}
	if c.SQLMaxSchemasPerTenant < 1 {
		return errf("SVC_SQL_MAX_SCHEMAS_PER_TENANT", "must be at least 1, got %d", c.SQLMaxSchemasPerTenant)
	}
	if c.PostgresMaxConns < 1 {
		return errf("SVC_POSTGRES_MAX_CONNS", "must be at least 1, got %d", c.PostgresMaxConns)
	}
	if c.PostgresMinConns < 0 || c.PostgresMinConns > c.PostgresMaxConns {
		return errf("SVC_POSTGRES_MIN_CONNS", "must be between 0 and SVC_POSTGRES_MAX_CONNS (%d), got %d", c.PostgresMaxConns, c.PostgresMinConns)
	}
	return nil
}

func (c *Config) validateAdmin() *Error {
	if c.MetricsRequireAuth && c.MetricsBearer == "" {
		return errf("SVC_METRICS_BEARER", "is required (directly or through SVC_METRICS_BEARER_FILE) when SVC_METRICS_REQUIRE_AUTH=true")
	}
	if net.ParseIP(c.AdminBindAddress) == nil && c.AdminBindAddress != "localhost" {
		return errf("SVC_ADMIN_BIND_ADDRESS", "must be an IP address or localhost, got %q", c.AdminBindAddress)
	}
	return nil
}
