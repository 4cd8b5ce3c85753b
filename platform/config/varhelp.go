package config

// Help is a variable's entry in its help topic, help/topics/config/<group>.md:
// the section heading it is listed under and its full description. The
// one-line Doc of the variable table is what the README's tables and the
// `svc init` template show; Help is the longer text `svc help config.<group>`
// shows. `make generate` writes both from here (docs/CONTRIBUTING.md,
// "Adding a setting"), and docs/gen's TestGeneratedFilesCurrent fails when
// the README or a topic differs from what it would write.
type Help struct {
	// Section is the topic's heading the variable is listed under; empty
	// means VARIABLES.
	Section string
	// Text follows the generated "`NAME` (kind, default)" head. A variable
	// that accepts NAME_FILE says so here.
	Text string
}

// HelpOf returns v's help entry; a variable without one is listed under
// VARIABLES with its Doc.
func HelpOf(v Var) Help {
	h, ok := varHelp[v.Name]
	if !ok {
		return Help{Text: v.Doc}
	}
	return h
}

// varHelp holds the help entries, keyed by variable name, in the order of
// the variable table.
var varHelp = map[string]Help{
	"SVC_CONTEXT_PATH":                         {Text: "URL prefix of every API route, including `{ctx}/help` and `{ctx}/health`. Trailing slashes are dropped. It must start with `/` or be empty; empty mounts the API at the root. It must be a plain path: no `{`, `}`, `?`, `#`, `*` or spaces. `/openapi.json` and `/docs` are always at the root."},
	"SVC_HTTP_PORT":                            {Text: "port of the main HTTP listener; the address it binds is `SVC_HTTP_BIND_ADDRESS` (loopback by default in mock mode). 1 to 65535, and different from `SVC_ADMIN_PORT`."},
	"SVC_HTTP_IDLE_TIMEOUT":                    {Text: "how long an idle keep-alive connection is held open. `0` uses `SVC_HTTP_READ_TIMEOUT` instead."},
	"SVC_HTTP_READ_HEADER_TIMEOUT":             {Text: "time allowed to receive the request line and headers; protects against slow-header clients. `0` uses `SVC_HTTP_READ_TIMEOUT` instead."},
	"SVC_HTTP_READ_TIMEOUT":                    {Text: "time allowed to read a whole request including its body. `0` disables the limit."},
	"SVC_HTTP_WRITE_TIMEOUT":                   {Text: "time from the end of the request headers to the end of the response. `0` (the default) disables it, so long searches and large responses are not cut off."},
	"SVC_LOG_LEVEL":                            {Text: "`debug`, `info`, `warn` or `error`; `warning` is accepted for `warn`. Logs are text lines on stdout."},
	"SVC_ERROR_RESPONSE_MODE":                  {Text: "`sanitized` or `verbose`. In sanitized mode an internal error answers `SERVER_ERROR: internal error [ticket: <uuid>]` and only the log, under the same ticket, holds the cause. `verbose` puts the internal error text in the response; use it in development only."},
	"SVC_MODEL_CACHE_LEASE":                    {Text: "how long a node may use a decoded copy of a model's schema before decoding it again from the stored record. Each expiry is jittered by 10 percent. A cached copy is never used once the stored model's revision has changed, so the lease bounds how long a rarely written model's decoded schema stays in memory rather than staleness; `0` keeps copies until the revision changes. On PostgreSQL svc also keeps each tenant's stored models in memory, so that `GET {ctx}/model/` and the model read of every entity write cost no database round trip; a model write through this node refreshes them at once, and the lease bounds how long a write by another process sharing the database stays unseen. In cluster mode (`SVC_CLUSTER_ENABLED=true`) this in-memory copy of stored models is off: every node reads the model record on each use, so another node's lock or change level is seen by the next write."},
	"SVC_PROFILES":                             {Text: "profile names; `.env.{profile}` files in the working directory are read in this order and a later profile wins. Read from the process environment only; see `config`."},
	"SVC_STARTUP_TIMEOUT":                      {Text: "deadline for storage start-up (connecting, checking and applying migrations) and the transaction manager; in cluster mode it also bounds joining the seed nodes. Must be above 0. When it passes, svc exits with status 1."},
	"SVC_STORAGE_BACKEND":                      {Text: "`memory`, `sqlite` or `postgres`. On `memory`, svc sizes the Go collector's headroom on the part of the heap that is not stored documents, so the resident size stays near what the store holds; setting the Go runtime's own `GOGC` turns this off."},
	"SVC_SQLITE_PATH":                          {Text: "the SQLite database file. Empty means `$XDG_DATA_HOME/svc/svc.db`, or `~/.local/share/svc/svc.db` when `XDG_DATA_HOME` is unset (the data directory). The directory is created (mode 0700) when missing. Beside the file SQLite keeps `svc.db-wal` and `svc.db-shm`, and svc keeps the lock file `svc.db.lock`: copy the database with `svc backup`, never by copying files of a running svc."},
	"SVC_SQLITE_AUTO_MIGRATE":                  {Text: "apply pending schema migrations when svc opens the file. With `false`, a file whose schema is older than the binary is refused at startup (`svc migrate` applies them). A file written by a newer svc is always refused."},
	"SVC_SQLITE_BUSY_TIMEOUT":                  {Text: "how long a write waits when another process holds the file's write lock (an operator's `sqlite3` shell, say). When it passes the request answers 503 `SERVICE_UNAVAILABLE`, retryable. `0` fails at once. svc's own writes never wait on each other this way: they share one writer."},
	"SVC_SQLITE_CACHE_SIZE":                    {Text: "SQLite's page cache per connection, in KiB (svc opens one writer and up to twice as many readers as cores). At least 1. Reads beyond the cache come from the operating system's file cache (the file is memory-mapped up to 256 MiB)."},
	"SVC_SQLITE_SEARCH_SCAN_LIMIT":             {Text: "the most rows one direct search (or stream-data page) examines on SQLite; a search that would examine more answers 400 `SCAN_BUDGET_EXHAUSTED`. Asynchronous searches run in the background pool and are not bounded by it. `0` means no limit."},
	"SVC_SUPPRESS_BANNER":                      {Text: "do not print the startup banner, including the mock-authentication warning, on stderr. Meant for CI and tests."},
	"SVC_MAX_STATE_VISITS":                     {Text: "how many times one workflow cascade may enter the same state; the next visit aborts the request with `WORKFLOW_FAILED`. At least 1."},
	"SVC_MAX_ENTITIES_PER_REQUEST":             {Text: "extension. The most entities one request may create or update: an array body on `POST {ctx}/entity/JSON/{name}/{version}`, `POST {ctx}/entity/{format}` (collection create) and `PUT {ctx}/entity/{format}` (collection update), and the compute members' create RPC. More answer 413 `TOO_MANY_ENTITIES` naming this setting, before anything is written. It bounds amplification: an array of empty objects costs about 3 bytes an entity, so the 10 MiB body cap alone would allow millions. 0 or less means the default."},
	"SVC_STATS_GROUP_MAX":                      {Text: "the most groups a grouped-statistics query may produce, and the largest `limit` it accepts. More groups answer `GROUP_CARDINALITY_EXCEEDED`. 0 or less means the default."},
	"SVC_TLS_CERT_FILE":                        {Text: "PEM certificate (chain) for TLS on the HTTP listener and the gRPC listener. Set together with `SVC_TLS_KEY_FILE`, or neither. With TLS on, `/openapi.json` advertises `https` URLs. The admin listener stays plain HTTP."},
	"SVC_TLS_KEY_FILE":                         {Text: "PEM private key matching `SVC_TLS_CERT_FILE`."},
	"SVC_HTTP_BIND_ADDRESS":                    {Text: "extension. Address the HTTP listener binds: an IP address or host name, or `*` for every interface. Empty means `127.0.0.1` in mock mode (every caller is an administrator there, so it must not face a network by accident) and every interface in jwt mode; the startup banner says which. In a container running mock mode, set `*`."},
	"SVC_HTTP_MAX_BODY_BYTES":                  {Text: "extension. The request body cap of the listeners, in bytes (64 MiB by default). A larger body (by `Content-Length` or while reading a chunked one) answers 413 `BAD_REQUEST` in problem+json with `properties.maxBodyBytes`. Operations keep their own limits below it (10 MiB for entity, model, workflow and search bodies, answering 400 or 413 as each operation documents). At least 1."},
	"SVC_LOG_FORMAT":                           {Text: "extension. `text` (slog's key=value lines) or `json` (one JSON object per line, for log collectors). Both go to stdout."},
	"SVC_ACCESS_LOG":                           {Text: "extension. One `request` log line per request at info level with `method`, `path` (no query string), `status`, `bytes` (response body), `duration_ms`, `request_id` (the `X-Request-ID` returned to the client) and `tenant` (empty before authentication). Its cost is in BENCHMARKS.md."},
	"SVC_ADMIN_BIND_ADDRESS":                   {Text: "address of the admin listener: an IP address or `localhost`. The default keeps probes and metrics off the network; use `0.0.0.0` inside containers so the orchestrator can reach them."},
	"SVC_ADMIN_PORT":                           {Text: "port of the admin listener. 1 to 65535, different from `SVC_HTTP_PORT`. `svc health` reads this variable to find the listener."},
	"SVC_METRICS_BEARER":                       {Text: "when set, `GET /metrics` requires `Authorization: Bearer <value>` and answers 401 otherwise. Accepts `SVC_METRICS_BEARER_FILE`. `/livez` and `/readyz` never require it."},
	"SVC_METRICS_REQUIRE_AUTH":                 {Text: "refuse to start while `SVC_METRICS_BEARER` is empty. Turn it on whenever the admin listener is reachable from a network."},
	"SVC_OTEL_ENABLED":                         {Text: "export traces and metrics over OpenTelemetry (OTLP) with the OpenTelemetry Go SDK. The exporter endpoint, protocol and headers come from the standard `OTEL_EXPORTER_OTLP_*` variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL` `grpc` (default) or `http/protobuf`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_INSECURE`, ...) and `OTEL_SERVICE_NAME` (default `svc`). Spans cover HTTP requests (one per request, named by route template), gRPC calls, entity storage operations and compute dispatch; metrics are the request counts and durations. Off, no span is created and requests pay nothing. The Prometheus endpoint works either way."},
	"SVC_ADMIN_PPROF":                          {Text: "extension. Serve Go's pprof profiles under `/debug/pprof/` on the admin listener (`go tool pprof http://127.0.0.1:9091/debug/pprof/profile?seconds=30`). Profiles reveal internals and a CPU profile costs CPU, so keep it off unless diagnosing, and never expose the admin listener with it on."},
	"SVC_CORS_ENABLED":                         {Text: "answer CORS requests. `false` removes the handling entirely, for deployments where an ingress or proxy owns CORS; preflight requests then reach the router like any other request."},
	"SVC_CORS_ALLOWED_ORIGINS":                 {Text: "the allowed origins. Empty selects loopback mode: `http` and `https` origins on `localhost`, `127.0.0.1` or `[::1]`, any port. A single `*` allows every origin. Anything else is an allowlist matched exactly."},
	"SVC_GRPC_PORT":                            {Text: "port of the gRPC listener. 1 to 65535. With `SVC_TLS_CERT_FILE` set it uses TLS."},
	"SVC_GRPC_BIND_ADDRESS":                    {Text: "extension. Address the gRPC listener binds: an IP address or host name, or `*` for every interface. Empty means `127.0.0.1` in mock mode (every caller would be an administrator) and every interface in jwt mode; the startup banner says which. Compute members on other hosts of a mock-mode server need `*` or an address."},
	"SVC_KEEPALIVE_INTERVAL":                   {Text: "seconds between svc's keep-alive messages to each member. At least 1."},
	"SVC_KEEPALIVE_TIMEOUT":                    {Text: "seconds without any message from a member before it is disconnected. At least `SVC_KEEPALIVE_INTERVAL`. Any message from the member counts, not only keep-alives."},
	"SVC_COMPUTE_GRPC_ENDPOINT":                {Section: "COMPUTE CLIENT", Text: "`host:port` of svc's gRPC listener, for a compute client. Extension: a comma-separated list of `host:port` (the nodes of a cluster); the Go member client (`compute/member`) joins the first and, whenever its stream is lost or a connect fails, reconnects to the next one round-robin with jittered backoff (200 ms doubling to 10 s), so a member whose node died joins a live node."},
	"SVC_COMPUTE_HTTP_BASE":                    {Section: "COMPUTE CLIENT", Text: "base URL of svc's HTTP API including the context path, for a compute client's callbacks."},
	"SVC_COMPUTE_TOKEN":                        {Section: "COMPUTE CLIENT", Text: "bearer token a compute client presents. Accepts `SVC_COMPUTE_TOKEN_FILE`."},
	"SVC_SEARCH_ASYNC_WORKERS":                 {Text: "jobs executing at once on this node. At least 1."},
	"SVC_SEARCH_ASYNC_QUEUE":                   {Text: "jobs that may wait for a worker, beyond those executing. 0 or more. A submission that finds the queue full answers 503 `SEARCH_QUEUE_FULL` and creates no job."},
	"SVC_SEARCH_ASYNC_MAX_PER_TENANT":          {Text: "jobs one tenant may have queued or executing on this node. When not set it follows `SVC_SEARCH_ASYNC_WORKERS`, so one tenant cannot hold more than the whole pool. `0` disables the cap. Over the cap: 503 `SEARCH_QUEUE_FULL`."},
	"SVC_SEARCH_JOB_HEARTBEAT_INTERVAL":        {Text: "how often a running job records that it is alive. Must be above 0."},
	"SVC_SEARCH_JOB_MAX_ATTEMPTS":              {Text: "how many times a job may be started before it is marked `FAILED` for good. At least 1."},
	"SVC_SEARCH_JOB_STALE_AFTER":               {Text: "a `RUNNING` job without a heartbeat for this long is considered lost and is re-run, or marked `FAILED` once it has used all its attempts. Must be at least 4 times `SVC_SEARCH_JOB_HEARTBEAT_INTERVAL`."},
	"SVC_SEARCH_REAP_INTERVAL":                 {Text: "how often finished jobs past their lifetime are deleted. Must be above 0."},
	"SVC_SEARCH_SNAPSHOT_TTL":                  {Text: "how long a finished job and its results stay readable; afterwards its status, results and cancel answer 404 `SEARCH_JOB_NOT_FOUND`. Must be above 0."},
	"SVC_SEARCH_MAX_SORT_KEYS":                 {Text: "the most `sort` keys one search request may give; more answer 400 `INVALID_FIELD_PATH`. 0 or less means the default."},
	"SVC_SCHEDULER_ENABLED":                    {Text: "run the scan loop on this node. With `false` nothing fires here; tasks are still armed and fire once a node with the scheduler enabled scans."},
	"SVC_SCHEDULER_SCAN_INTERVAL":              {Text: "time between scans; also the usual delay between a task falling due and firing. Must be above 0."},
	"SVC_SCHEDULER_BATCH_SIZE":                 {Text: "the most due tasks picked up by one scan, oldest first. At least 1."},
	"SVC_SCHEDULER_DISTRIBUTION":               {Text: "`round-robin` spreads due tasks over the live nodes; `self` fires them on the coordinator. Without clustering it is always `self`."},
	"SVC_SCHEDULER_COORDINATOR":                {Text: "how the scanning node is chosen. The only value, `lowest-node-id`, picks the live node whose `SVC_NODE_ID` sorts first."},
	"SVC_SCHEDULER_REDISPATCH_BACKOFF":         {Text: "a task that was handed out is not handed out again for this long, so a failed or slow fire is retried at most this often. Must be above 0."},
	"SVC_SCHEDULER_EXPIRY_GRACE":               {Text: "extra lateness tolerated beyond a transition's `timeoutMs` before the task expires instead of firing late. Set it to at least the clock skew between nodes. 0 or more."},
	"SVC_CLUSTER_ENABLED":                      {Text: "turn multi-node mode on. Requires `SVC_NODE_ID`, `SVC_HMAC_SECRET` and `SVC_STORAGE_BACKEND=postgres`."},
	"SVC_NODE_ID":                              {Text: "this node's unique, stable name; a pod name works well. Required when clustering."},
	"SVC_NODE_ADDR":                            {Text: "the HTTP base URL peers use to reach this node, scheme included (`http://` or `https://`). Point it at the HTTP port, not the gRPC port."},
	"SVC_GRPC_NODE_ADDR":                       {Text: "the `host:port` peers use for this node's gRPC listener. When empty, peers use the host of `SVC_NODE_ADDR` with their own `SVC_GRPC_PORT`."},
	"SVC_GOSSIP_ADDR":                          {Text: "`[host]:port` the gossip protocol binds to and advertises. A malformed value stops startup."},
	"SVC_GOSSIP_STABILITY_WINDOW":              {Text: "at startup, after joining, the node waits until the member count has not changed for this long before serving."},
	"SVC_SEED_NODES":                           {Text: "gossip addresses (`host:port`) to join at startup. List every node; a node skips itself. With no reachable seed left, the node forms a cluster of one."},
	"SVC_HMAC_SECRET":                          {Text: "64 hex characters (32 bytes), identical on every node. Required when clustering. Accepts `SVC_HMAC_SECRET_FILE`. It encrypts gossip, authenticates node-to-node calls and signs transaction routing tokens. Changing it needs a full stop of the cluster and a start with the new value. Generate one with `openssl rand -hex 32`."},
	"SVC_PROXY_TIMEOUT":                        {Text: "how long a node waits for the response headers when it forwards a request to the node that owns its transaction."},
	"SVC_DISPATCH_WAIT_TIMEOUT":                {Text: "when no local compute member has the tags a workflow needs, how long to wait for gossip to show a peer that has one. After that: 503 `NO_COMPUTE_MEMBER_FOR_TAG`."},
	"SVC_DISPATCH_FORWARD_TIMEOUT":             {Text: "timeout of a call forwarded to the peer that holds the matching compute member."},
	"SVC_TX_TOKEN_TTL":                         {Text: "lifetime of the routing token given to compute members so their callbacks join the right transaction. Must be at least `SVC_DISPATCH_FORWARD_TIMEOUT`."},
	"SVC_POSTGRES_URL":                         {Text: "connection URL, for example `postgres://svc:pw@db:5432/svc?sslmode=require`. Required with the postgres backend. Accepts `SVC_POSTGRES_URL_FILE`; prefer it, since the URL usually holds a password. When PostgreSQL runs on the same host, a Unix-socket URL (`postgres://svc@/svc?host=/var/run/postgresql`) spares the TCP loopback and TLS work: about 15 % less CPU per request on both sides than TCP."},
	"SVC_POSTGRES_ACQUIRE_TIMEOUT":             {Text: "how long a request waits for a free pooled connection. When it passes the request answers 503 `SERVICE_UNAVAILABLE`, marked retryable. `0` waits without limit."},
	"SVC_POSTGRES_AUTO_MIGRATE":                {Text: "apply pending schema migrations at startup. With `false`, startup refuses a database whose schema is older than the binary; run `svc migrate` first (for example as a deployment job) so nodes never race to migrate."},
	"SVC_POSTGRES_IDLE_IN_TX_TIMEOUT":          {Text: "the server ends a session that sits idle inside an open transaction for this long. `0` disables it."},
	"SVC_POSTGRES_MAX_CONNS":                   {Text: "the most connections this node's pool opens. At least 1. Size `max_connections` on the server for every node plus headroom."},
	"SVC_POSTGRES_MIN_CONNS":                   {Text: "connections kept open even when idle. Between 0 and `SVC_POSTGRES_MAX_CONNS`."},
	"SVC_POSTGRES_MAX_CONN_IDLE_TIME":          {Text: "an idle pooled connection above the minimum is closed after this long."},
	"SVC_POSTGRES_MIGRATE_LOCK_TIMEOUT":        {Text: "how long migration waits for a table lock before giving up. `0` waits without limit."},
	"SVC_POSTGRES_SEARCH_STATEMENT_TIMEOUT":    {Text: "ceiling for the scan of one asynchronous search; a job that exceeds it ends `FAILED`. `0` disables it."},
	"SVC_SQL_QUERY_TIMEOUT":                    {Text: "statement timeout of `POST {ctx}/sql/query` and the `statement_timeout` of every SQL schema's login role (psql and BI sessions). svc enforces it from outside too: a role's statement running past it is cancelled even when the session changed its own `statement_timeout`, and a role's session idle inside a transaction longer than it is ended. See `svc help sql`."},
	"SVC_POSTGRES_STATEMENT_TIMEOUT":           {Text: "ceiling for any other single SQL statement. `0` disables it."},
	"SVC_SCHEMA_EXTEND_MAX_RETRIES":            {Text: "retries when concurrent writers extend the same model schema at once. Values below 1 mean the default."},
	"SVC_SCHEMA_SAVEPOINT_INTERVAL":            {Text: "a setting of the compatible system, where schema extensions are kept as a log of changes with a complete copy every this many entries. svc stores each model's schema whole (one optimistic write per widening, retried `SVC_SCHEMA_EXTEND_MAX_RETRIES` times), so there is no log to fold: only `64` is accepted, any other value stops startup with a line saying so. Values below 1 mean the default."},
	"SVC_IAM_MODE":                             {Section: "MODE", Text: "`mock` or `jwt`. In `mock` mode no token is needed: every request acts as user `mock-user-001` of tenant `mock-tenant` with the kind and roles below, and the Authorization header is ignored. The banner warns about it. In `jwt` mode every protected operation needs a valid bearer token. Any other value stops startup."},
	"SVC_REQUIRE_JWT":                          {Section: "MODE", Text: "refuse to start unless `SVC_IAM_MODE=jwt` and a signing key is set. Turn it on in production so a missing variable cannot silently fall back to mock mode."},
	"SVC_IAM_MOCK_KIND":                        {Section: "MODE", Text: "principal kind in mock mode: `user`, `service` or `system`."},
	"SVC_IAM_MOCK_ROLES":                       {Section: "MODE", Text: "roles of the mock principal. An empty list keeps the default roles."},
	"SVC_JWT_SIGNING_KEY":                      {Section: "ISSUED TOKENS", Text: "RSA private key in PEM (PKCS#8 or PKCS#1), or the same PEM base64-encoded on one line. Required in `jwt` mode. Accepts `SVC_JWT_SIGNING_KEY_FILE`. Its key id (`kid`) is derived from the public key, so every node sharing the key publishes the same id."},
	"SVC_JWT_ISSUER":                           {Section: "ISSUED TOKENS", Text: "the `iss` claim of tokens svc issues; inbound first-party tokens must carry exactly this issuer."},
	"SVC_JWT_AUDIENCE":                         {Section: "ISSUED TOKENS", Text: "when set, inbound tokens must name it in `aud`, and tokens svc issues carry it. Empty disables the audience check."},
	"SVC_JWT_EXPIRY_SECONDS":                   {Section: "ISSUED TOKENS", Text: "lifetime of issued tokens, reported as `expires_in`. At least 1."},
	"SVC_JWT_BOOTSTRAP_AUDIENCE":               {Section: "ISSUED TOKENS", Text: "`client` or `human`: the audience of the keypair built from `SVC_JWT_SIGNING_KEY`. The token endpoint signs with a `client` keypair, so `human` means the configured key does not sign machine tokens until a `client` keypair is created."},
	"SVC_BOOTSTRAP_CLIENT_ID":                  {Section: "BOOTSTRAP CLIENT", Text: "its client id. Setting it requires `SVC_BOOTSTRAP_CLIENT_SECRET`; in `jwt` mode a secret without an id is refused too."},
	"SVC_BOOTSTRAP_CLIENT_SECRET":              {Section: "BOOTSTRAP CLIENT", Text: "its secret. Accepts `SVC_BOOTSTRAP_CLIENT_SECRET_FILE`. A person chose it, so it is stored as an Argon2id hash (19 MiB, 2 passes, 1 lane), not as the SHA-256 used for generated secrets, so a leaked backup does not give it away to a dictionary attack. Each process pays the slow hash once per secret: after the first successful token request, the secret is recognised from an in-memory cache that holds only keyed hashes (HMAC under a per-process random key), never the secret. Start-up logs one warning, without the secret, when it is shorter than 32 characters; use a long random secret. Stored SHA-256 hashes from earlier versions keep working; the bootstrap client's is replaced with Argon2id at the next start. Send it percent-encoded in the Basic header if it contains `+` or `%`."},
	"SVC_BOOTSTRAP_ROLES":                      {Section: "BOOTSTRAP CLIENT", Text: "its roles."},
	"SVC_BOOTSTRAP_TENANT_ID":                  {Section: "BOOTSTRAP CLIENT", Text: "its tenant. Its administrators are the only ones who manage the signing keypairs (`auth.keys`). OIDC provider registration needs a UUID tenant, so set a UUID here if that tenant will register providers."},
	"SVC_BOOTSTRAP_USER_ID":                    {Section: "BOOTSTRAP CLIENT", Text: "the `caas_user_id` of its tokens."},
	"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS":    {Section: "ISSUED TOKENS", Text: "validity of the bootstrap keypair and of keypairs created without `validTo`, in days. The banner warns during a key's final 30 days. At least 1."},
	"SVC_IAM_M2M_ADMIN_ROLE_ENABLED":           {Section: "MACHINE CLIENTS AND TRUSTED KEYS", Text: "honour `withAdminRole=true` on `POST /clients`. While false such a request answers 404 `FEATURE_DISABLED` and creates nothing."},
	"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED": {Section: "MACHINE CLIENTS AND TRUSTED KEYS", Text: "enable the `/oauth/keys/trusted` operations. While false they answer 404 `FEATURE_DISABLED`."},
	"SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES":   {Section: "MACHINE CLIENTS AND TRUSTED KEYS", Text: "the most top-level members a registered JWK may have. At least 1."},
	"SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT":       {Section: "MACHINE CLIENTS AND TRUSTED KEYS", Text: "the most active, unexpired trusted keys per tenant; `0` means unbounded. 0 or more."},
	"SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS":    {Section: "MACHINE CLIENTS AND TRUSTED KEYS", Text: "validity given to a trusted key registered without `validTo`, in days. At least 1."},
	"SVC_OIDC_ROLES_CLAIM":                     {Section: "OIDC PROVIDERS", Text: "claim read for roles in federated tokens when a provider sets no `rolesClaim`. A dotted name (`realm_access.roles`) walks nested objects when no top-level claim has that exact name. Must not be empty."},
	"SVC_OIDC_REQUIRE_HTTPS":                   {Section: "OIDC PROVIDERS", Text: "refuse provider discovery URIs that are not `https`."},
	"SVC_OIDC_ALLOW_PRIVATE_NETWORKS":          {Section: "OIDC PROVIDERS", Text: "let discovery and key fetches reach loopback, link-local and private addresses, which are otherwise blocked to prevent server-side request forgery. Test and development only."},
	"SVC_OIDC_CONNECT_TIMEOUT_MS":              {Section: "OIDC PROVIDERS", Text: "connect timeout of discovery and key-set fetches, in milliseconds. At least 1."},
	"SVC_OIDC_CONNECTION_REQUEST_TIMEOUT_MS":   {Section: "OIDC PROVIDERS", Text: "how long those fetches wait for a pooled connection, in milliseconds (at most 16 fetches are in flight at once). At least 1."},
	"SVC_OIDC_SOCKET_TIMEOUT_MS":               {Section: "OIDC PROVIDERS", Text: "read timeout of those fetches (the wait for the response headers), in milliseconds. At least 1."},
	"SVC_AUTH_CACHE_RECONCILE_INTERVAL":        {Section: "CACHES", Text: "how often each node re-reads keypairs, trusted keys and OIDC providers from storage into its verification caches, jittered by 10 percent. If a cache has not been refreshed successfully for 10 intervals, verification through it fails closed (tokens it would have accepted get 401) until storage is reachable again. Must be above 0."},
	"SVC_OAUTH_MAX_FAILURES_PER_CLIENT":        {Section: "TOKEN ENDPOINT PROTECTION", Text: "failed authentications for one claimed client id (known or not) per window. `0` disables this limit."},
	"SVC_OAUTH_MAX_FAILURES_PER_ADDRESS":       {Section: "TOKEN ENDPOINT PROTECTION", Text: "failed authentications from one source address per window; IPv6 addresses count per /64. `0` disables this limit."},
	"SVC_OAUTH_FAILURE_WINDOW":                 {Section: "TOKEN ENDPOINT PROTECTION", Text: "the window both limits count in, started by the first failure. At least `1s`."},
}
