package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"svc/platform/config"
)

// awaitingEffect are the settings allowed to name no test yet, each with
// the reason; any other "" below fails the walk.
var awaitingEffect = map[string]string{
	"SVC_GRPC_NODE_ADDR":           "the gRPC address a node advertises for tx-token relays; no test runs nodes whose gRPC address differs from the derived default",
	"SVC_DISPATCH_FORWARD_TIMEOUT": "no test holds a forwarded call past its bound (config rules with SVC_TX_TOKEN_TTL are tested in config)",
}

// settingEffects names, for each setting, a test that changes it and sees
// behaviour change (or refusal, for a value svc cannot honour). "" marks a
// setting whose effect no test demonstrates yet: allowed only for the
// settings in awaitingEffect, which the walk lists.
// Where the named test drives a package's options struct rather than the
// binary, TestSettingsReachTheirOptions (settings_wiring_test.go) shows
// serve passes the variable to that field.
var settingEffects = map[string]string{
	"SVC_CONTEXT_PATH": "TestHelpServedUnderContextPath", "SVC_HTTP_PORT": "TestServeComputeMemberJoins",
	"SVC_HTTP_IDLE_TIMEOUT": "TestHTTPTimeoutFallbacks", "SVC_HTTP_READ_HEADER_TIMEOUT": "TestReadHeaderTimeoutClosesSlowClient",
	"SVC_HTTP_READ_TIMEOUT": "TestHTTPTimeoutFallbacks", "SVC_HTTP_WRITE_TIMEOUT": "TestHTTPTimeoutFallbacks",
	"SVC_LOG_LEVEL": "TestRequestIDInProblemLogAndAccessLog", "SVC_ERROR_RESPONSE_MODE": "TestPanicBecomesServerErrorWithTicket",
	"SVC_MODEL_CACHE_LEASE": "TestCacheLease", "SVC_PROFILES": "TestProfiles", "SVC_STARTUP_TIMEOUT": "TestClusterWrongHMACSecretCannotJoin",
	"SVC_STORAGE_BACKEND": "TestSQLiteSurvivesRestart", "SVC_SUPPRESS_BANNER": "TestSuppressBanner",
	"SVC_MAX_STATE_VISITS": "TestVisitAndDepthLimits", "SVC_STATS_GROUP_MAX": "TestSearchAndStatsLimits",
	"SVC_TLS_CERT_FILE": "TestTLSListener", "SVC_TLS_KEY_FILE": "TestTLSListener",
	"SVC_HTTP_BIND_ADDRESS": "TestBindAddresses", "SVC_HTTP_MAX_BODY_BYTES": "TestMalformedRequestsGetProblemJSON",
	"SVC_LOG_FORMAT": "TestNewLoggerFormats", "SVC_ACCESS_LOG": "TestRequestIDInProblemLogAndAccessLog",
	"SVC_ADMIN_BIND_ADDRESS": "TestBindAddresses", "SVC_ADMIN_PORT": "TestVersionHealthInitMigrate", "SVC_METRICS_BEARER": "TestAdminListener",
	"SVC_METRICS_REQUIRE_AUTH": "TestConfigErrorsExit1", "SVC_OTEL_ENABLED": "TestServeExportsOTLPWhenEnabled",
	"SVC_ADMIN_PPROF": "TestAdminPprofSwitch", "SVC_CORS_ENABLED": "TestCORS", "SVC_CORS_ALLOWED_ORIGINS": "TestCORS",
	"SVC_GRPC_PORT": "TestServeComputeMemberJoins", "SVC_GRPC_BIND_ADDRESS": "TestBindAddresses",
	"SVC_KEEPALIVE_INTERVAL": "TestServeKeepAliveVariables", "SVC_KEEPALIVE_TIMEOUT": "TestServeKeepAliveVariables",
	"SVC_COMPUTE_GRPC_ENDPOINT": "TestConfigFromComputeSettings", "SVC_COMPUTE_HTTP_BASE": "TestConfigFromComputeSettings",
	"SVC_COMPUTE_TOKEN":        "TestConfigFromComputeSettings",
	"SVC_SEARCH_ASYNC_WORKERS": "TestAsyncCapacityAndCancel", "SVC_SEARCH_ASYNC_QUEUE": "TestAsyncCapacityAndCancel",
	"SVC_SEARCH_ASYNC_MAX_PER_TENANT": "TestAsyncCapacityAndCancel", "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "TestAsyncStaleAndReap",
	"SVC_SEARCH_JOB_MAX_ATTEMPTS": "TestAsyncStaleAndReap", "SVC_SEARCH_JOB_STALE_AFTER": "TestAsyncStaleAndReap",
	"SVC_SEARCH_REAP_INTERVAL": "TestAsyncStaleAndReap", "SVC_SEARCH_SNAPSHOT_TTL": "TestAsyncStaleAndReap",
	"SVC_SEARCH_MAX_SORT_KEYS": "TestSearchAndStatsLimits",
	"SVC_SCHEDULER_ENABLED":    "TestScheduledTaskSurvivesRestart", "SVC_SCHEDULER_SCAN_INTERVAL": "TestScheduledTaskSurvivesRestart",
	"SVC_SCHEDULER_BATCH_SIZE": "TestScanBoundsInflightFires", "SVC_SCHEDULER_REDISPATCH_BACKOFF": "TestScheduledTransitionsHTTP",
	"SVC_SCHEDULER_EXPIRY_GRACE": "TestFireTaskRules",
	"SVC_POSTGRES_URL":           "TestJWTModeSurvivesRestartOnPostgres", "SVC_POSTGRES_ACQUIRE_TIMEOUT": "TestAcquireTimeoutIsUnavailable",
	"SVC_POSTGRES_AUTO_MIGRATE": "TestAutoMigrateOffRefusesStaleSchema", "SVC_POSTGRES_IDLE_IN_TX_TIMEOUT": "TestSessionTimeoutsApplied",
	"SVC_POSTGRES_MAX_CONNS": "TestPostgresPoolSettings", "SVC_POSTGRES_MIN_CONNS": "TestPostgresPoolSettings", "SVC_POSTGRES_MAX_CONN_IDLE_TIME": "TestPostgresPoolSettings",
	"SVC_POSTGRES_MIGRATE_LOCK_TIMEOUT": "TestMigrateLockTimeout", "SVC_POSTGRES_SEARCH_STATEMENT_TIMEOUT": "TestSessionTimeoutsApplied",
	"SVC_POSTGRES_STATEMENT_TIMEOUT": "TestSessionTimeoutsApplied", "SVC_SCHEMA_EXTEND_MAX_RETRIES": "TestAdmitGivesUpAfterMaxRetries",
	"SVC_SCHEMA_SAVEPOINT_INTERVAL": "TestSavepointIntervalOnlyDefault",
	"SVC_SQLITE_PATH":               "TestSQLiteSurvivesRestart", "SVC_SQLITE_AUTO_MIGRATE": "TestSQLiteAutoMigrateOff",
	"SVC_SQLITE_BUSY_TIMEOUT": "TestBusyTimeout", "SVC_SQLITE_CACHE_SIZE": "TestCacheSizeApplied",
	"SVC_SQLITE_SEARCH_SCAN_LIMIT": "TestSearchScanLimit",
	"SVC_IAM_MODE":                 "TestJWTModeSurvivesRestartOnPostgres", "SVC_REQUIRE_JWT": "TestConfigErrorsExit1",
	"SVC_IAM_MOCK_KIND": "TestMockAuthUsesConfiguredKindAndRoles", "SVC_IAM_MOCK_ROLES": "TestMockAuthUsesConfiguredKindAndRoles",
	"SVC_JWT_SIGNING_KEY": "TestBadSigningKeyRefusesStart", "SVC_JWT_ISSUER": "TestAuthSettingsShapeTokensAndKeys", "SVC_JWT_AUDIENCE": "TestAudienceRule",
	"SVC_JWT_EXPIRY_SECONDS": "TestAuthSettingsShapeTokensAndKeys", "SVC_JWT_BOOTSTRAP_AUDIENCE": "TestBootstrapAudienceHumanSignsNoMachineTokens",
	"SVC_BOOTSTRAP_CLIENT_ID": "TestFederationSurvivesRestartOnPostgres", "SVC_BOOTSTRAP_CLIENT_SECRET": "TestFederationSurvivesRestartOnPostgres",
	"SVC_BOOTSTRAP_ROLES": "TestAuthSettingsShapeTokensAndKeys", "SVC_BOOTSTRAP_TENANT_ID": "TestFederationSurvivesRestartOnPostgres", "SVC_BOOTSTRAP_USER_ID": "TestAuthSettingsShapeTokensAndKeys",
	"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS": "TestAuthSettingsShapeTokensAndKeys", "SVC_IAM_M2M_ADMIN_ROLE_ENABLED": "TestWithAdminRoleGate",
	"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED": "TestTrustedKeysDisabledOverHTTP", "SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES": "TestTrustedJWKValidation",
	"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT": "TestTrustedRetireSiblingsAndCapOnReactivate", "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS": "TestAuthSettingsShapeTokensAndKeys",
	"SVC_OIDC_ROLES_CLAIM": "TestRolesClaimShapes", "SVC_OIDC_REQUIRE_HTTPS": "TestOIDCNetworkSettings", "SVC_OIDC_ALLOW_PRIVATE_NETWORKS": "TestOIDCNetworkSettings",
	"SVC_OIDC_CONNECT_TIMEOUT_MS": "TestOIDCNetworkSettings", "SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS": "TestFetchTimeoutsNameTheirStage", "SVC_OIDC_SOCKET_TIMEOUT_MS": "TestOIDCNetworkSettings",
	"SVC_AUTH_CACHE_RECONCILE_INTERVAL": "TestReconcileLoopRunsAndStops",
	"SVC_OAUTH_MAX_FAILURES_PER_CLIENT": "TestClientAuthThrottle", "SVC_OAUTH_MAX_FAILURES_PER_ADDRESS": "TestClientAuthThrottle",
	"SVC_OAUTH_FAILURE_WINDOW":     "TestPerClientLimitAndWindow",
	"SVC_MAX_ENTITIES_PER_REQUEST": "TestEntitiesPerRequestCap", "SVC_IDEMPOTENCY_RETENTION": "TestIdempotencyKey", "SVC_SQL_QUERY_TIMEOUT": "TestSQLQueryTimeout",
	"SVC_CLUSTER_ENABLED": "TestClusterLockOnOneNodeSeenByTheNextWriteOnAnother",
	"SVC_NODE_ID":         "TestClusterSchedulersFireEachTaskOnce", "SVC_NODE_ADDR": "TestGossipMembershipBusAndTags",
	"SVC_GRPC_NODE_ADDR": "", "SVC_GOSSIP_ADDR": "TestClusterWrongHMACSecretCannotJoin", "SVC_GOSSIP_STABILITY_WINDOW": "TestGossipWaitsForStabilityWindow",
	"SVC_SEED_NODES": "TestClusterScriptStartsNodes", "SVC_HMAC_SECRET": "TestClusterWrongHMACSecretCannotJoin",
	"SVC_PROXY_TIMEOUT": "TestClusterProxyTimeout", "SVC_DISPATCH_WAIT_TIMEOUT": "TestClusterDispatchErrors",
	"SVC_DISPATCH_FORWARD_TIMEOUT": "", "SVC_TX_TOKEN_TTL": "TestJoinTokenErrors",
	"SVC_SCHEDULER_DISTRIBUTION": "TestClusterSchedulersFireEachTaskOnce", "SVC_SCHEDULER_COORDINATOR": "TestClusterSurvivesSIGKILL",

	// SQL connection and schema bounds (issue 23).
	"SVC_SQL_MAX_CONNECTIONS": "TestSQLConnectionBudget", "SVC_SQL_MAX_CONNECTIONS_PER_TENANT": "TestSQLConnectionBudget",
	"SVC_SQL_MAX_SCHEMAS_PER_TENANT": "TestSQLConnectionBoundsHTTP",

	// The change feed's bounds (issue 28).
	"SVC_CHANGEFEED_RETENTION": "TestChangeFeedBoundsSettings", "SVC_CHANGEFEED_BACKLOG_MAX_EVENTS": "TestChangeFeedBoundsSettings",
	"SVC_CHANGEFEED_SUBSCRIPTION_TTL": "TestChangeFeedBoundsSettings", "SVC_CHANGEFEED_SWEEP_INTERVAL": "TestChangeFeedBoundsSettings",

	// Change-feed webhooks (issue 28); TestWebhookSettingsReachTheirOptions
	// shows each reaches the deliverer's options.
	"SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "TestWebhookRefusals", "SVC_WEBHOOK_TIMEOUT": "TestWebhookTimeout",
	"SVC_WEBHOOK_MAX_BATCH_EVENTS": "TestWebhookDelivery", "SVC_WEBHOOK_BACKOFF_MAX": "TestWebhookDelivery",
	"SVC_WEBHOOK_FAILING_AFTER": "TestWebhookDelivery",
	// The live queue, the stall bound and the live-key lease (issue 28);
	// TestSettingsReachTheirOptions shows each reaches the hub's options.
	"SVC_CHANGEFEED_LIVE_BUFFER": "TestStalledLiveStreamIsCutOthersKeepGoing", "SVC_CHANGEFEED_STALL_TIMEOUT": "TestStalledStreamIsCut",
	"SVC_CHANGEFEED_LIVE_LEASE": "TestLiveKeysCrossNodesUnderALease",
}

// TestEverySettingWalked walks every SVC_ variable: each names a test
// that exists and shows its effect. It fails for a new variable nobody
// placed, a named test that was renamed away, or a setting without a test
// that awaitingEffect does not excuse; it logs the excused ones.
func TestEverySettingWalked(t *testing.T) {
	tests := testFuncs(t)
	var unproven []string
	for _, v := range config.Vars(&config.Config{}) {
		name, ok := settingEffects[v.Name]
		switch {
		case !ok:
			t.Errorf("%s: not walked; add it to settingEffects with the test showing its effect", v.Name)
		case name == "" && awaitingEffect[v.Name] == "":
			t.Errorf("%s: no test shows its effect; name one in settingEffects", v.Name)
		case name == "":
			unproven = append(unproven, v.Name+" ("+awaitingEffect[v.Name]+")")
		case !tests[name]:
			t.Errorf("%s: test %s does not exist", v.Name, name)
		}
	}
	sort.Strings(unproven)
	t.Logf("%d settings without a test demonstrating their effect: %s", len(unproven), strings.Join(unproven, ", "))
}

// testFuncs are the names of every Test function in the module.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
