// Package config holds svc's configuration: one typed struct, loaded once at
// start from the environment and .env files (docs/decisions/0002-configuration.md), then validated.
package config

import "time"

// Config is every SVC_* setting. Fields are filled by Load from the variable
// table in vars.go; nothing else reads the environment.
type Config struct {
	// Server
	ContextPath           string
	HTTPPort              int
	HTTPIdleTimeout       time.Duration
	HTTPReadHeaderTimeout time.Duration
	HTTPReadTimeout       time.Duration
	HTTPWriteTimeout      time.Duration
	LogLevel              string
	ErrorResponseMode     string
	ModelCacheLease       time.Duration
	Profiles              []string
	StartupTimeout        time.Duration
	StorageBackend        string
	SuppressBanner        bool
	MaxStateVisits        int
	StatsGroupMax         int
	MaxEntitiesPerRequest int
	// IdempotencyRetention is how long an Idempotency-Key answers repeats.
	IdempotencyRetention time.Duration
	TLSCertFile          string
	TLSKeyFile           string
	// Extensions (operations): listener addresses, body cap, log shape.
	HTTPBindAddress  string
	GRPCBindAddress  string
	HTTPMaxBodyBytes int
	LogFormat        string
	AccessLog        bool
	// Change-feed webhooks (extension).
	WebhookAllowPrivateNetworks bool
	WebhookTimeout              time.Duration
	WebhookMaxBatchEvents       int
	WebhookBackoffMax           time.Duration
	WebhookFailingAfter         int

	// Admin listener and telemetry
	AdminBindAddress   string
	AdminPort          int
	MetricsBearer      string
	MetricsRequireAuth bool
	OTelEnabled        bool
	AdminPprof         bool

	// CORS
	CORSEnabled        bool
	CORSAllowedOrigins []string

	// gRPC and compute members
	GRPCPort            int
	KeepaliveInterval   int
	KeepaliveTimeout    int
	ComputeGRPCEndpoint string
	ComputeHTTPBase     string
	ComputeToken        string

	// Search
	SearchAsyncWorkers         int
	SearchAsyncQueue           int
	SearchAsyncMaxPerTenant    int
	SearchJobHeartbeatInterval time.Duration
	SearchJobMaxAttempts       int
	SearchJobStaleAfter        time.Duration
	SearchReapInterval         time.Duration
	SearchSnapshotTTL          time.Duration
	SearchMaxSortKeys          int

	// Scheduler
	SchedulerEnabled           bool
	SchedulerScanInterval      time.Duration
	SchedulerBatchSize         int
	SchedulerDistribution      string
	SchedulerCoordinator       string
	SchedulerRedispatchBackoff time.Duration
	SchedulerExpiryGrace       time.Duration

	// Change feed
	ChangeFeedRetention        time.Duration
	ChangeFeedBacklogMaxEvents int
	ChangeFeedSubscriptionTTL  time.Duration
	ChangeFeedSweepInterval    time.Duration
	ChangeFeedLiveBuffer       int
	ChangeFeedStallTimeout     time.Duration
	ChangeFeedLiveLease        time.Duration

	// Cluster
	ClusterEnabled         bool
	NodeID                 string
	NodeAddr               string
	GRPCNodeAddr           string
	GossipAddr             string
	GossipStabilityWindow  time.Duration
	SeedNodes              []string
	HMACSecret             string
	ProxyTimeout           time.Duration
	DispatchWaitTimeout    time.Duration
	DispatchForwardTimeout time.Duration
	TxTokenTTL             time.Duration

	// Database
	PostgresURL                    string
	PostgresAcquireTimeout         time.Duration
	PostgresAutoMigrate            bool
	PostgresIdleInTxTimeout        time.Duration
	PostgresMaxConns               int
	PostgresMinConns               int
	PostgresMaxConnIdleTime        time.Duration
	PostgresMigrateLockTimeout     time.Duration
	PostgresSearchStatementTimeout time.Duration
	// SQLQueryTimeout bounds SQL over saved SQL schemas (HTTP and logins).
	SQLQueryTimeout time.Duration
	// SQLMaxConnections and SQLMaxConnectionsPerTenant bound the
	// connections made as SQL schema roles; SQLMaxSchemasPerTenant the
	// schemas (and so roles) a tenant may save.
	SQLMaxConnections          int
	SQLMaxConnectionsPerTenant int
	SQLMaxSchemasPerTenant     int
	PostgresStatementTimeout   time.Duration
	SchemaExtendMaxRetries     int
	SchemaSavepointInterval    int

	// SQLite (SVC_STORAGE_BACKEND=sqlite). SQLitePath empty means the
	// default file, SQLiteFile resolves it.
	SQLitePath            string
	SQLiteAutoMigrate     bool
	SQLiteBusyTimeout     time.Duration
	SQLiteCacheSize       int
	SQLiteSearchScanLimit int

	// Authentication
	IAMMode                       string
	RequireJWT                    bool
	MockKind                      string
	MockRoles                     []string
	JWTSigningKey                 string
	JWTIssuer                     string
	JWTAudience                   string
	JWTExpirySeconds              int
	JWTBootstrapAudience          string
	BootstrapClientID             string
	BootstrapClientSecret         string
	BootstrapRoles                []string
	BootstrapTenantID             string
	BootstrapUserID               string
	KeypairDefaultValidityDays    int
	M2MAdminRoleEnabled           bool
	TrustedKeyRegistrationEnabled bool
	TrustedKeyMaxJWKProperties    int
	TrustedKeyMaxPerTenant        int
	TrustedKeyMaxValidityDays     int
	OIDCRolesClaim                string
	OIDCRequireHTTPS              bool
	OIDCAllowPrivateNetworks      bool
	OIDCConnectTimeoutMS          int
	OIDCConnectionRequestTimeout  int
	OIDCSocketTimeoutMS           int
	AuthCacheReconcileInterval    time.Duration
	// Failed client authentications at the OAuth endpoints (throttle/).
	OAuthMaxFailuresPerClient  int
	OAuthMaxFailuresPerAddress int
	OAuthFailureWindow         time.Duration

	// Sources records which files contributed values, for the startup log.
	Sources []string
	// Warnings name unknown SVC_ variables (with the closest known name);
	// the commands print them at start.
	Warnings []string
}

// Defaults returns the configuration with every default applied and no
// environment read, exactly as Load returns it when nothing is set; tests
// start from it.
func Defaults() *Config {
	c := &Config{}
	for _, v := range Vars(c) {
		if err := v.set(v.Default); err != nil {
			panic("config: bad default for " + v.Name + ": " + err.Error())
		}
	}
	// The same clamps and derived values Load applies, so that Load with
	// nothing set equals Defaults().
	if err := c.normalize(map[string]bool{}); err != nil {
		panic("config: " + err.Error())
	}
	return c
}
