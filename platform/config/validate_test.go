package config

import (
	"strings"
	"testing"
	"time"
)

// TestRules runs every cross-field and enumerated-value rule through Load,
// so parsing, clamps and validation are exercised together. want is the
// variable the *Error must name; "" means the configuration is accepted.
func TestRules(t *testing.T) {
	jwt := env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----"}
	cases := []struct {
		name string
		env  env
		want string
	}{
		{"defaults are valid", env{}, ""},

		// search: stale-after at least 4x the heartbeat
		{"stale just below 4x heartbeat", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "15s", "SVC_SEARCH_JOB_STALE_AFTER": "59s"}, "SVC_SEARCH_JOB_STALE_AFTER"},
		{"stale exactly 4x heartbeat", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "15s", "SVC_SEARCH_JOB_STALE_AFTER": "1m"}, ""},
		{"heartbeat raised past default stale/4", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "2m"}, "SVC_SEARCH_JOB_STALE_AFTER"},
		{"heartbeat at default stale/4", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "75s"}, ""},
		{"stale zero", env{"SVC_SEARCH_JOB_STALE_AFTER": "0"}, "SVC_SEARCH_JOB_STALE_AFTER"},
		// search: heartbeat above 0
		{"heartbeat 0", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "0"}, "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL"},
		{"heartbeat 0s", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "0s"}, "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL"},
		{"heartbeat 1ns", env{"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL": "1ns"}, ""},
		// search: workers at least 1
		{"workers 0", env{"SVC_SEARCH_ASYNC_WORKERS": "0"}, "SVC_SEARCH_ASYNC_WORKERS"},
		{"workers -1", env{"SVC_SEARCH_ASYNC_WORKERS": "-1"}, "SVC_SEARCH_ASYNC_WORKERS"},
		{"workers 1", env{"SVC_SEARCH_ASYNC_WORKERS": "1"}, ""},
		// search: queue at least 0
		{"queue -1", env{"SVC_SEARCH_ASYNC_QUEUE": "-1"}, "SVC_SEARCH_ASYNC_QUEUE"},
		{"queue 0", env{"SVC_SEARCH_ASYNC_QUEUE": "0"}, ""},
		// search: per-tenant cap at least 0
		{"max per tenant -1", env{"SVC_SEARCH_ASYNC_MAX_PER_TENANT": "-1"}, "SVC_SEARCH_ASYNC_MAX_PER_TENANT"},
		{"max per tenant 0 disables", env{"SVC_SEARCH_ASYNC_MAX_PER_TENANT": "0"}, ""},
		// search: max attempts at least 1
		{"max attempts 0", env{"SVC_SEARCH_JOB_MAX_ATTEMPTS": "0"}, "SVC_SEARCH_JOB_MAX_ATTEMPTS"},
		{"max attempts -3", env{"SVC_SEARCH_JOB_MAX_ATTEMPTS": "-3"}, "SVC_SEARCH_JOB_MAX_ATTEMPTS"},
		{"max attempts 1", env{"SVC_SEARCH_JOB_MAX_ATTEMPTS": "1"}, ""},
		{"reap interval 0", env{"SVC_SEARCH_REAP_INTERVAL": "0"}, "SVC_SEARCH_REAP_INTERVAL"},
		{"snapshot ttl 0", env{"SVC_SEARCH_SNAPSHOT_TTL": "0"}, "SVC_SEARCH_SNAPSHOT_TTL"},

		// cluster timing: token TTL at least the forward timeout
		{"tx token ttl below forward timeout", env{"SVC_TX_TOKEN_TTL": "29s"}, "SVC_TX_TOKEN_TTL"},
		{"tx token ttl equal to forward timeout", env{"SVC_TX_TOKEN_TTL": "30s"}, ""},
		{"forward timeout raised past default ttl", env{"SVC_DISPATCH_FORWARD_TIMEOUT": "2m"}, "SVC_TX_TOKEN_TTL"},
		{"both raised together", env{"SVC_DISPATCH_FORWARD_TIMEOUT": "2m", "SVC_TX_TOKEN_TTL": "3m"}, ""},
		{"keepalive interval 0", env{"SVC_KEEPALIVE_INTERVAL": "0"}, "SVC_KEEPALIVE_INTERVAL"},
		{"keepalive timeout below interval", env{"SVC_KEEPALIVE_INTERVAL": "10", "SVC_KEEPALIVE_TIMEOUT": "9"}, "SVC_KEEPALIVE_TIMEOUT"},

		// auth: SVC_REQUIRE_JWT
		{"require jwt in mock mode", env{"SVC_REQUIRE_JWT": "true"}, "SVC_REQUIRE_JWT"},
		{"require jwt in mock mode with a key", env{"SVC_REQUIRE_JWT": "true", "SVC_JWT_SIGNING_KEY": "k"}, "SVC_REQUIRE_JWT"},
		{"require jwt in jwt mode without a key", env{"SVC_REQUIRE_JWT": "true", "SVC_IAM_MODE": "jwt"}, "SVC_REQUIRE_JWT"},
		{"require jwt satisfied", jwt.with("SVC_REQUIRE_JWT", "true"), ""},
		// auth: jwt mode needs a signing key
		{"jwt mode without a key", env{"SVC_IAM_MODE": "jwt"}, "SVC_JWT_SIGNING_KEY"},
		{"jwt mode with an empty key", env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY": ""}, "SVC_JWT_SIGNING_KEY"},
		{"jwt mode with a key", jwt, ""},
		// auth: bootstrap client pairing
		{"bootstrap id without secret (mock)", env{"SVC_BOOTSTRAP_CLIENT_ID": "boot"}, "SVC_BOOTSTRAP_CLIENT_SECRET"},
		{"bootstrap id without secret (jwt)", jwt.with("SVC_BOOTSTRAP_CLIENT_ID", "boot"), "SVC_BOOTSTRAP_CLIENT_SECRET"},
		{"bootstrap id with secret", jwt.with("SVC_BOOTSTRAP_CLIENT_ID", "boot", "SVC_BOOTSTRAP_CLIENT_SECRET", "s3cret"), ""},
		{"bootstrap secret without id (jwt)", jwt.with("SVC_BOOTSTRAP_CLIENT_SECRET", "s3cret"), "SVC_BOOTSTRAP_CLIENT_ID"},
		{"bootstrap secret without id (mock) is ignored", env{"SVC_BOOTSTRAP_CLIENT_SECRET": "s3cret"}, ""},
		// auth: enumerations
		{"iam mode bogus", env{"SVC_IAM_MODE": "bogus"}, "SVC_IAM_MODE"},
		{"iam mode upper case", env{"SVC_IAM_MODE": "JWT"}, "SVC_IAM_MODE"},
		{"iam mode set but empty", env{"SVC_IAM_MODE": ""}, "SVC_IAM_MODE"},
		{"iam mode mock", env{"SVC_IAM_MODE": "mock"}, ""},
		{"mock kind bogus", env{"SVC_IAM_MOCK_KIND": "robot"}, "SVC_IAM_MOCK_KIND"},
		{"mock kind user", env{"SVC_IAM_MOCK_KIND": "user"}, ""},
		{"mock kind service", env{"SVC_IAM_MOCK_KIND": "service"}, ""},
		{"mock kind system", env{"SVC_IAM_MOCK_KIND": "system"}, ""},
		{"bootstrap audience bogus", env{"SVC_JWT_BOOTSTRAP_AUDIENCE": "machine"}, "SVC_JWT_BOOTSTRAP_AUDIENCE"},
		{"bootstrap audience human", env{"SVC_JWT_BOOTSTRAP_AUDIENCE": "human"}, ""},
		{"bootstrap audience client", env{"SVC_JWT_BOOTSTRAP_AUDIENCE": "client"}, ""},
		{"jwt expiry 0", env{"SVC_JWT_EXPIRY_SECONDS": "0"}, "SVC_JWT_EXPIRY_SECONDS"},
		{"trusted keys per tenant -1", env{"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT": "-1"}, "SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT"},
		{"trusted keys per tenant 0 is unbounded", env{"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT": "0"}, ""},
		{"trusted key validity 0", env{"SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS": "0"}, "SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS"},
		{"jwk properties 0", env{"SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES": "0"}, "SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES"},
		{"keypair validity 0", env{"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS": "0"}, "SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS"},
		{"oidc connect timeout 0", env{"SVC_OIDC_CONNECT_TIMEOUT_MS": "0"}, "SVC_OIDC_CONNECT_TIMEOUT_MS"},
		{"oidc roles claim blank", env{"SVC_OIDC_ROLES_CLAIM": " "}, "SVC_OIDC_ROLES_CLAIM"},
		{"auth reconcile 0", env{"SVC_AUTH_CACHE_RECONCILE_INTERVAL": "0"}, "SVC_AUTH_CACHE_RECONCILE_INTERVAL"},

		// server: enumerations
		{"storage backend sqlite", env{"SVC_STORAGE_BACKEND": "sqlite"}, ""},
		{"storage backend sqlite with a path", env{"SVC_STORAGE_BACKEND": "sqlite", "SVC_SQLITE_PATH": "/tmp/x/svc.db"}, ""},
		{"storage backend unknown", env{"SVC_STORAGE_BACKEND": "mysql"}, "SVC_STORAGE_BACKEND"},
		{"sqlite cache size zero", env{"SVC_SQLITE_CACHE_SIZE": "0"}, "SVC_SQLITE_CACHE_SIZE"},
		{"sqlite scan limit negative", env{"SVC_SQLITE_SEARCH_SCAN_LIMIT": "-1"}, "SVC_SQLITE_SEARCH_SCAN_LIMIT"},
		{"sqlite scan limit unlimited", env{"SVC_SQLITE_SEARCH_SCAN_LIMIT": "0"}, ""},
		{"sqlite busy timeout bad", env{"SVC_SQLITE_BUSY_TIMEOUT": "soon"}, "SVC_SQLITE_BUSY_TIMEOUT"},
		{"storage backend upper case", env{"SVC_STORAGE_BACKEND": "Memory"}, "SVC_STORAGE_BACKEND"},
		{"storage backend postgres without url", env{"SVC_STORAGE_BACKEND": "postgres"}, "SVC_POSTGRES_URL"},
		{"storage backend postgres with url", env{"SVC_STORAGE_BACKEND": "postgres", "SVC_POSTGRES_URL": "postgres://db/svc"}, ""},
		{"error response mode debug", env{"SVC_ERROR_RESPONSE_MODE": "debug"}, "SVC_ERROR_RESPONSE_MODE"},
		{"error response mode verbose", env{"SVC_ERROR_RESPONSE_MODE": "verbose"}, ""},
		{"log level trace", env{"SVC_LOG_LEVEL": "trace"}, "SVC_LOG_LEVEL"},
		{"log level warning synonym", env{"SVC_LOG_LEVEL": "warning"}, ""},
		{"max state visits 0", env{"SVC_MAX_STATE_VISITS": "0"}, "SVC_MAX_STATE_VISITS"},
		{"startup timeout 0", env{"SVC_STARTUP_TIMEOUT": "0"}, "SVC_STARTUP_TIMEOUT"},
		// server: ports
		{"http port 0", env{"SVC_HTTP_PORT": "0"}, "SVC_HTTP_PORT"},
		{"http port -1", env{"SVC_HTTP_PORT": "-1"}, "SVC_HTTP_PORT"},
		{"http port 65536", env{"SVC_HTTP_PORT": "65536"}, "SVC_HTTP_PORT"},
		{"http port 1", env{"SVC_HTTP_PORT": "1"}, ""},
		{"http port 65535", env{"SVC_HTTP_PORT": "65535"}, ""},
		{"admin port 0", env{"SVC_ADMIN_PORT": "0"}, "SVC_ADMIN_PORT"},
		{"admin port 70000", env{"SVC_ADMIN_PORT": "70000"}, "SVC_ADMIN_PORT"},
		{"grpc port 0", env{"SVC_GRPC_PORT": "0"}, "SVC_GRPC_PORT"},
		{"grpc port 65536", env{"SVC_GRPC_PORT": "65536"}, "SVC_GRPC_PORT"},
		{"admin port equals http port", env{"SVC_ADMIN_PORT": "8080"}, "SVC_ADMIN_PORT"},
		// server: TLS pairing
		{"tls cert without key", env{"SVC_TLS_CERT_FILE": "/tls/cert.pem"}, "SVC_TLS_KEY_FILE"},
		{"tls key without cert", env{"SVC_TLS_KEY_FILE": "/tls/key.pem"}, "SVC_TLS_CERT_FILE"},
		{"tls cert and key", env{"SVC_TLS_CERT_FILE": "/tls/cert.pem", "SVC_TLS_KEY_FILE": "/tls/key.pem"}, ""},
		// server: context path
		{"context path without leading slash", env{"SVC_CONTEXT_PATH": "api"}, "SVC_CONTEXT_PATH"},
		{"context path with a space", env{"SVC_CONTEXT_PATH": "/my api"}, "SVC_CONTEXT_PATH"},
		{"context path with a template", env{"SVC_CONTEXT_PATH": "/t/{tenant}"}, "SVC_CONTEXT_PATH"},
		{"context path with a query", env{"SVC_CONTEXT_PATH": "/api?x"}, "SVC_CONTEXT_PATH"},
		{"context path nested", env{"SVC_CONTEXT_PATH": "/svc/api/"}, ""},
		{"context path empty", env{"SVC_CONTEXT_PATH": ""}, ""},

		// admin
		{"metrics auth without bearer", env{"SVC_METRICS_REQUIRE_AUTH": "true"}, "SVC_METRICS_BEARER"},
		{"metrics auth with empty bearer", env{"SVC_METRICS_REQUIRE_AUTH": "true", "SVC_METRICS_BEARER": ""}, "SVC_METRICS_BEARER"},
		{"metrics auth with bearer", env{"SVC_METRICS_REQUIRE_AUTH": "true", "SVC_METRICS_BEARER": "tok"}, ""},
		{"metrics bearer without auth", env{"SVC_METRICS_BEARER": "tok"}, ""},
		{"admin bind hostname", env{"SVC_ADMIN_BIND_ADDRESS": "admin.example"}, "SVC_ADMIN_BIND_ADDRESS"},
		{"admin bind localhost", env{"SVC_ADMIN_BIND_ADDRESS": "localhost"}, ""},
		{"admin bind any v6", env{"SVC_ADMIN_BIND_ADDRESS": "::"}, ""},

		// database
		{"postgres max conns 0", env{"SVC_POSTGRES_MAX_CONNS": "0"}, "SVC_POSTGRES_MAX_CONNS"},
		{"postgres min above max", env{"SVC_POSTGRES_MAX_CONNS": "4", "SVC_POSTGRES_MIN_CONNS": "5"}, "SVC_POSTGRES_MIN_CONNS"},
		{"postgres min -1", env{"SVC_POSTGRES_MIN_CONNS": "-1"}, "SVC_POSTGRES_MIN_CONNS"},
		{"sql max connections 0", env{"SVC_SQL_MAX_CONNECTIONS": "0"}, "SVC_SQL_MAX_CONNECTIONS"},
		{"sql per tenant above total", env{"SVC_SQL_MAX_CONNECTIONS": "3", "SVC_SQL_MAX_CONNECTIONS_PER_TENANT": "4"}, "SVC_SQL_MAX_CONNECTIONS_PER_TENANT"},
		{"sql per tenant 0", env{"SVC_SQL_MAX_CONNECTIONS_PER_TENANT": "0"}, "SVC_SQL_MAX_CONNECTIONS_PER_TENANT"},
		{"sql schemas per tenant 0", env{"SVC_SQL_MAX_SCHEMAS_PER_TENANT": "0"}, "SVC_SQL_MAX_SCHEMAS_PER_TENANT"},

		// scheduler
		{"scheduler scan interval 0", env{"SVC_SCHEDULER_SCAN_INTERVAL": "0"}, "SVC_SCHEDULER_SCAN_INTERVAL"},
		{"scheduler batch 0", env{"SVC_SCHEDULER_BATCH_SIZE": "0"}, "SVC_SCHEDULER_BATCH_SIZE"},
		{"scheduler backoff 0", env{"SVC_SCHEDULER_REDISPATCH_BACKOFF": "0"}, "SVC_SCHEDULER_REDISPATCH_BACKOFF"},
		{"scheduler grace negative", env{"SVC_SCHEDULER_EXPIRY_GRACE": "-1s"}, "SVC_SCHEDULER_EXPIRY_GRACE"},
		{"scheduler grace 0", env{"SVC_SCHEDULER_EXPIRY_GRACE": "0"}, ""},
		{"scheduler distribution ignored without clustering", env{"SVC_SCHEDULER_DISTRIBUTION": "random"}, ""},
		{"scheduler distribution bogus in a cluster", clusterEnv.with("SVC_SCHEDULER_DISTRIBUTION", "random"), "SVC_SCHEDULER_DISTRIBUTION"},
		{"scheduler coordinator bogus", env{"SVC_SCHEDULER_COORDINATOR": "highest-node-id"}, "SVC_SCHEDULER_COORDINATOR"},

		// cluster
		{"cluster valid", clusterEnv, ""},
		{"cluster without node id", clusterEnv.with("SVC_NODE_ID", ""), "SVC_NODE_ID"},
		{"cluster without hmac secret", clusterEnv.with("SVC_HMAC_SECRET", ""), "SVC_HMAC_SECRET"},
		{"cluster hmac 62 hex", clusterEnv.with("SVC_HMAC_SECRET", hmac64[:62]), "SVC_HMAC_SECRET"},
		{"cluster hmac 66 hex", clusterEnv.with("SVC_HMAC_SECRET", hmac64+"00"), "SVC_HMAC_SECRET"},
		{"cluster hmac 32 hex (16 bytes)", clusterEnv.with("SVC_HMAC_SECRET", hmac64[:32]), "SVC_HMAC_SECRET"},
		{"cluster hmac not hex", clusterEnv.with("SVC_HMAC_SECRET", strings.Repeat("zz", 32)), "SVC_HMAC_SECRET"},
		{"cluster hmac raw 64 chars", clusterEnv.with("SVC_HMAC_SECRET", strings.Repeat("secret!!", 8)), "SVC_HMAC_SECRET"},
		{"cluster hmac upper-case hex", clusterEnv.with("SVC_HMAC_SECRET", strings.ToUpper(hmac64)), ""},
		{"cluster on memory backend", clusterEnv.with("SVC_STORAGE_BACKEND", "memory"), "SVC_CLUSTER_ENABLED"},
		{"cluster on sqlite backend", clusterEnv.with("SVC_STORAGE_BACKEND", "sqlite"), "SVC_CLUSTER_ENABLED"},
		{"cluster on default backend", env{"SVC_CLUSTER_ENABLED": "true", "SVC_NODE_ID": "n", "SVC_HMAC_SECRET": hmac64}, "SVC_CLUSTER_ENABLED"},
		{"cluster postgres without url", clusterEnv.with("SVC_POSTGRES_URL", ""), "SVC_POSTGRES_URL"},
		{"node addr without scheme", clusterEnv.with("SVC_NODE_ADDR", "localhost:8080"), "SVC_NODE_ADDR"},
		{"node addr ftp", clusterEnv.with("SVC_NODE_ADDR", "ftp://node1:8080"), "SVC_NODE_ADDR"},
		{"node addr without host", clusterEnv.with("SVC_NODE_ADDR", "http://"), "SVC_NODE_ADDR"},
		{"node addr port only", clusterEnv.with("SVC_NODE_ADDR", "http://:8080"), "SVC_NODE_ADDR"},
		{"node addr port out of range", clusterEnv.with("SVC_NODE_ADDR", "http://node1:99999"), "SVC_NODE_ADDR"},
		{"node addr empty port", clusterEnv.with("SVC_NODE_ADDR", "http://node1:"), "SVC_NODE_ADDR"},
		{"node addr empty", clusterEnv.with("SVC_NODE_ADDR", ""), "SVC_NODE_ADDR"},
		{"node addr https with port", clusterEnv.with("SVC_NODE_ADDR", "https://node1.internal:8443"), ""},
		{"node addr ipv6", clusterEnv.with("SVC_NODE_ADDR", "http://[fd00::1]:8080"), ""},
		{"gossip addr without port", clusterEnv.with("SVC_GOSSIP_ADDR", "node1"), "SVC_GOSSIP_ADDR"},
		{"gossip addr bare port", clusterEnv.with("SVC_GOSSIP_ADDR", "7946"), "SVC_GOSSIP_ADDR"},
		{"gossip addr port not a number", clusterEnv.with("SVC_GOSSIP_ADDR", "node1:gossip"), "SVC_GOSSIP_ADDR"},
		{"gossip addr port 0", clusterEnv.with("SVC_GOSSIP_ADDR", ":0"), "SVC_GOSSIP_ADDR"},
		{"gossip addr port 65536", clusterEnv.with("SVC_GOSSIP_ADDR", ":65536"), "SVC_GOSSIP_ADDR"},
		{"gossip addr empty", clusterEnv.with("SVC_GOSSIP_ADDR", ""), "SVC_GOSSIP_ADDR"},
		{"gossip addr unbracketed ipv6", clusterEnv.with("SVC_GOSSIP_ADDR", "fd00::1:7946"), "SVC_GOSSIP_ADDR"},
		{"gossip addr host and port", clusterEnv.with("SVC_GOSSIP_ADDR", "0.0.0.0:7946"), ""},
		{"gossip addr ipv6", clusterEnv.with("SVC_GOSSIP_ADDR", "[fd00::1]:7946"), ""},
		{"cluster rules ignored when off", env{"SVC_NODE_ADDR": "nonsense", "SVC_GOSSIP_ADDR": "nonsense", "SVC_HMAC_SECRET": "short"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadEnv(t, tc.env)
			wantVar(t, err, tc.want)
		})
	}
}

// TestValidateDirect checks Validate on a struct built in code, the way
// other packages' tests use it.
func TestValidateDirect(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"defaults", func(c *Config) {}, ""},
		{"stale below 4x heartbeat", func(c *Config) { c.SearchJobStaleAfter = 4*c.SearchJobHeartbeatInterval - time.Nanosecond }, "SVC_SEARCH_JOB_STALE_AFTER"},
		{"ttl below forward", func(c *Config) { c.TxTokenTTL = c.DispatchForwardTimeout - time.Second }, "SVC_TX_TOKEN_TTL"},
		{"workers 0", func(c *Config) { c.SearchAsyncWorkers = 0 }, "SVC_SEARCH_ASYNC_WORKERS"},
		{"queue -1", func(c *Config) { c.SearchAsyncQueue = -1 }, "SVC_SEARCH_ASYNC_QUEUE"},
		{"attempts 0", func(c *Config) { c.SearchJobMaxAttempts = 0 }, "SVC_SEARCH_JOB_MAX_ATTEMPTS"},
		{"heartbeat negative", func(c *Config) { c.SearchJobHeartbeatInterval = -time.Second }, "SVC_SEARCH_JOB_HEARTBEAT_INTERVAL"},
		{"port 65536", func(c *Config) { c.GRPCPort = 65536 }, "SVC_GRPC_PORT"},
		{"iam mode", func(c *Config) { c.IAMMode = "oauth" }, "SVC_IAM_MODE"},
		{"cors", func(c *Config) { c.CORSAllowedOrigins = []string{"https://a.example/"} }, "SVC_CORS_ALLOWED_ORIGINS"},
		{"cors disabled skips the list", func(c *Config) {
			c.CORSEnabled = false
			c.CORSAllowedOrigins = []string{"https://a.example/"}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mutate(c)
			wantVar(t, c.Validate(), tc.want)
		})
	}
}

func TestErrorIsOneLine(t *testing.T) {
	e := &Error{Var: "SVC_X", Reason: "first\r\nsecond\nthird\rfourth"}
	if got, want := e.Error(), "SVC_X: first second third fourth"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
