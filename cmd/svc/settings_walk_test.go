package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"svc/config"
)

// clusterPending are the cluster settings of compute dispatch and
// transaction routing across nodes (issue 16 items 2 and 3), built on
// another branch: accepted, walked once that work lands.
var clusterPending = map[string]bool{"SVC_PROXY_TIMEOUT": true, "SVC_DISPATCH_WAIT_TIMEOUT": true,
	"SVC_DISPATCH_FORWARD_TIMEOUT": true, "SVC_TX_TOKEN_TTL": true}

// settingEffects names, for each setting, a test that changes it and sees
// behaviour change (or refusal, for a value svc cannot honour). "" marks a
// setting whose effect no test demonstrates yet; the walk lists them.
var settingEffects = map[string]string{
	"SVC_CONTEXT_PATH": "TestHelpServedUnderContextPath", "SVC_HTTP_PORT": "TestServeComputeMemberJoins",
	"SVC_HTTP_IDLE_TIMEOUT": "TestHTTPTimeoutFallbacks", "SVC_HTTP_READ_HEADER_TIMEOUT": "TestReadHeaderTimeoutClosesSlowClient",
	"SVC_HTTP_READ_TIMEOUT": "TestHTTPTimeoutFallbacks", "SVC_HTTP_WRITE_TIMEOUT": "TestHTTPTimeoutFallbacks",
	"SVC_LOG_LEVEL": "TestRequestIDInProblemLogAndAccessLog", "SVC_ERROR_RESPONSE_MODE": "TestPanicBecomesServerErrorWithTicket",
	"SVC_MODEL_CACHE_LEASE": "TestCacheLease", "SVC_PROFILES": "TestProfiles", "SVC_STARTUP_TIMEOUT": "TestClusterWrongHMACSecretCannotJoin",
	"SVC_STORAGE_BACKEND": "TestJWTModeSurvivesRestartOnPostgres", "SVC_SUPPRESS_BANNER": "TestCommandsShareServeConfiguration",
	"SVC_MAX_STATE_VISITS": "TestVisitAndDepthLimits", "SVC_STATS_GROUP_MAX": "",
	"SVC_TLS_CERT_FILE": "TestTLSListener", "SVC_TLS_KEY_FILE": "TestTLSListener",
	"SVC_HTTP_BIND_ADDRESS": "TestListenHosts", "SVC_HTTP_MAX_BODY_BYTES": "TestMalformedRequestsGetProblemJSON",
	"SVC_LOG_FORMAT": "TestNewLoggerFormats", "SVC_ACCESS_LOG": "TestRequestIDInProblemLogAndAccessLog",
	"SVC_ADMIN_BIND_ADDRESS": "", "SVC_ADMIN_PORT": "TestVersionHealthInitMigrate", "SVC_METRICS_BEARER": "TestAdminListener",
	"SVC_METRICS_REQUIRE_AUTH": "TestConfigErrorsExit1", "SVC_OTEL_ENABLED": "TestHTTPSpansReachAnOTLPReceiver",
	"SVC_ADMIN_PPROF": "TestAdminPprofSwitch", "SVC_CORS_ENABLED": "TestCORS", "SVC_CORS_ALLOWED_ORIGINS": "TestCORS",
	"SVC_GRPC_PORT": "TestServeComputeMemberJoins", "SVC_GRPC_BIND_ADDRESS": "TestListenHosts",
	"SVC_KEEPALIVE_INTERVAL": "TestServeKeepAliveVariables", "SVC_KEEPALIVE_TIMEOUT": "TestServeKeepAliveVariables",
	"SVC_COMPUTE_GRPC_ENDPOINT": "TestConfigFromComputeSettings", "SVC_COMPUTE_HTTP_BASE": "TestConfigFromComputeSettings",
	"SVC_COMPUTE_TOKEN":        "TestConfigFromComputeSettings",
	"SVC_SEARCH_ASYNC_WORKERS": "TestAsyncCapacityAndCancel", "SVC_SEARCH_ASYNC_QUEUE": "TestAsyncCapacityAndCancel",
	"SVC_SEARCH_ASYNC_MAX_PER_TENANT": "TestAsyncCapacityAndCancel", "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "TestAsyncStaleAndReap",
	"SVC_SEARCH_JOB_MAX_ATTEMPTS": "TestAsyncStaleAndReap", "SVC_SEARCH_JOB_STALE_AFTER": "TestAsyncStaleAndReap",
	"SVC_SEARCH_REAP_INTERVAL": "TestAsyncStaleAndReap", "SVC_SEARCH_SNAPSHOT_TTL": "TestAsyncStaleAndReap",
	"SVC_SEARCH_MAX_SORT_KEYS": "",
	"SVC_SCHEDULER_ENABLED":    "TestScheduledTaskSurvivesRestart", "SVC_SCHEDULER_SCAN_INTERVAL": "TestScheduledTaskSurvivesRestart",
	"SVC_SCHEDULER_BATCH_SIZE": "TestScanBoundsInflightFires", "SVC_SCHEDULER_REDISPATCH_BACKOFF": "TestScheduledTransitionsHTTP",
	"SVC_SCHEDULER_EXPIRY_GRACE": "TestFireTaskRules",
	"SVC_POSTGRES_URL":           "TestJWTModeSurvivesRestartOnPostgres", "SVC_POSTGRES_ACQUIRE_TIMEOUT": "TestAcquireTimeoutIsUnavailable",
	"SVC_POSTGRES_AUTO_MIGRATE": "", "SVC_POSTGRES_IDLE_IN_TX_TIMEOUT": "TestSessionTimeoutsApplied",
	"SVC_POSTGRES_MAX_CONNS": "", "SVC_POSTGRES_MIN_CONNS": "", "SVC_POSTGRES_MAX_CONN_IDLE_TIME": "",
	"SVC_POSTGRES_MIGRATE_LOCK_TIMEOUT": "TestMigrateLockTimeout", "SVC_POSTGRES_SEARCH_STATEMENT_TIMEOUT": "TestSessionTimeoutsApplied",
	"SVC_POSTGRES_STATEMENT_TIMEOUT": "TestSessionTimeoutsApplied", "SVC_SCHEMA_EXTEND_MAX_RETRIES": "TestAdmitGivesUpAfterMaxRetries",
	"SVC_SCHEMA_SAVEPOINT_INTERVAL": "TestSavepointIntervalOnlyDefault",
	"SVC_IAM_MODE":                  "TestJWTModeSurvivesRestartOnPostgres", "SVC_REQUIRE_JWT": "TestConfigErrorsExit1",
	"SVC_IAM_MOCK_KIND": "TestMockAuthUsesConfiguredKindAndRoles", "SVC_IAM_MOCK_ROLES": "TestMockAuthUsesConfiguredKindAndRoles",
	"SVC_JWT_SIGNING_KEY": "TestBadSigningKeyRefusesStart", "SVC_JWT_ISSUER": "", "SVC_JWT_AUDIENCE": "TestAudienceRule",
	"SVC_JWT_EXPIRY_SECONDS": "", "SVC_JWT_BOOTSTRAP_AUDIENCE": "",
	"SVC_BOOTSTRAP_CLIENT_ID": "TestFederationSurvivesRestartOnPostgres", "SVC_BOOTSTRAP_CLIENT_SECRET": "TestFederationSurvivesRestartOnPostgres",
	"SVC_BOOTSTRAP_ROLES": "", "SVC_BOOTSTRAP_TENANT_ID": "TestFederationSurvivesRestartOnPostgres", "SVC_BOOTSTRAP_USER_ID": "",
	"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS": "", "SVC_IAM_M2M_ADMIN_ROLE_ENABLED": "TestWithAdminRoleGate",
	"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED": "TestTrustedKeysDisabledOverHTTP", "SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES": "TestTrustedJWKValidation",
	"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT": "TestTrustedRetireSiblingsAndCapOnReactivate", "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS": "",
	"SVC_OIDC_ROLES_CLAIM": "TestRolesClaimShapes", "SVC_OIDC_REQUIRE_HTTPS": "", "SVC_OIDC_ALLOW_PRIVATE_NETWORKS": "",
	"SVC_OIDC_CONNECT_TIMEOUT_MS": "", "SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS": "", "SVC_OIDC_SOCKET_TIMEOUT_MS": "",
	"SVC_AUTH_CACHE_RECONCILE_INTERVAL": "TestReconcileLoopRunsAndStops",
	"SVC_MAX_ENTITIES_PER_REQUEST":      "TestEntitiesPerRequestCap", "SVC_SQL_QUERY_TIMEOUT": "",
	"SVC_CLUSTER_ENABLED": "TestClusterLockOnOneNodeSeenByTheNextWriteOnAnother",
	"SVC_NODE_ID":         "TestClusterSchedulersFireEachTaskOnce", "SVC_NODE_ADDR": "TestGossipMembershipBusAndTags",
	"SVC_GRPC_NODE_ADDR": "", "SVC_GOSSIP_ADDR": "TestClusterWrongHMACSecretCannotJoin", "SVC_GOSSIP_STABILITY_WINDOW": "",
	"SVC_SEED_NODES": "TestClusterScriptStartsNodes", "SVC_HMAC_SECRET": "TestClusterWrongHMACSecretCannotJoin",
	"SVC_SCHEDULER_DISTRIBUTION": "TestClusterSchedulersFireEachTaskOnce", "SVC_SCHEDULER_COORDINATOR": "TestClusterSurvivesSIGKILL",
	"SVC_OAUTH_MAX_FAILURES_PER_CLIENT": "TestClientAuthThrottle", "SVC_OAUTH_MAX_FAILURES_PER_ADDRESS": "TestClientAuthThrottle",
	"SVC_OAUTH_FAILURE_WINDOW": "TestClientAuthThrottle",
}

// TestEverySettingWalked walks every SVC_ variable: each is pending
// (clusterPending) or names a test
// that exists and shows its effect. It fails for a new variable nobody
// placed, or a named test that was renamed away; it logs the settings
// still without a demonstrating test.
func TestEverySettingWalked(t *testing.T) {
	tests := testFuncs(t)
	var unproven []string
	for _, v := range config.Vars(&config.Config{}) {
		if clusterPending[v.Name] {
			if _, listed := settingEffects[v.Name]; listed {
				t.Errorf("%s is pending (clusterPending) and listed in settingEffects too", v.Name)
			}
			continue
		}
		name, ok := settingEffects[v.Name]
		switch {
		case !ok:
			t.Errorf("%s: not walked; add it to settingEffects with the test showing its effect", v.Name)
		case name == "":
			unproven = append(unproven, v.Name)
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
