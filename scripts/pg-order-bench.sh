#!/bin/bash
# Runs one bench/loadgen scenario against a fresh svc on a fresh PostgreSQL
# database and prints the rate, latency and the CPU svc and PostgreSQL spent
# per request (or entity), as docs/benchmarks-history.md's "Order workload on
# PostgreSQL" section was measured.
#
#   scripts/pg-order-bench.sh SCENARIO [CONCURRENCY] [DURATION]
#
# PG_BASE is the server URL without a database (default
# postgres://postgres@127.0.0.1:5432), PG_QUERY the URL's query string
# (default ?sslmode=disable), PG_DATA its data directory (for the
# postmaster's pid; without it only svc's CPU is reported). The server's CPU
# is the postmaster's and all its children's: use a server no one else
# loads. STATS=1 prints the top statements when pg_stat_statements is
# loaded and created in the server's postgres database.
set -euo pipefail
SC=${1:?scenario}; C=${2:-16}; D=${3:-10s}
PG_BASE=${PG_BASE:-postgres://postgres@127.0.0.1:5432}
PG_QUERY=${PG_QUERY:-?sslmode=disable}
DB=orderbench_$$
cd "$(dirname "$0")/.."
go build -o /tmp/svc-orderbench ./cmd/svc
go build -o /tmp/loadgen-orderbench ./bench/loadgen
psql "$PG_BASE/postgres" -qc "CREATE DATABASE $DB"
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; psql "$PG_BASE/postgres" -qc "DROP DATABASE $DB WITH (FORCE)"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HTTP=$(port); ADMIN=$(port); GRPC=$(port)
SVC_STORAGE_BACKEND=postgres SVC_POSTGRES_URL="$PG_BASE/$DB$PG_QUERY" SVC_HTTP_PORT=$HTTP SVC_ADMIN_PORT=$ADMIN \
	SVC_GRPC_PORT=$GRPC SVC_SUPPRESS_BANNER=true SVC_ADMIN_PPROF=true SVC_LOG_LEVEL=warn /tmp/svc-orderbench &
SPID=$!
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$HTTP/api/health" >/dev/null && break; sleep 0.2; done
PGPID=0
if [ -n "${PG_DATA:-}" ]; then PGPID=$(head -1 "$PG_DATA/postmaster.pid"); fi
if [ "${STATS:-}" = 1 ]; then psql "$PG_BASE/postgres" -qc "SELECT pg_stat_statements_reset()" >/dev/null || true; fi
/tmp/loadgen-orderbench -url "http://127.0.0.1:$HTTP/api" -scenario "$SC" -c "$C" -d "$D" -svc-pid $SPID -pg-pid $PGPID
if [ "${STATS:-}" = 1 ]; then
	psql "$PG_BASE/postgres" -c "SELECT calls, round(total_exec_time::numeric, 1) AS ms, round(max_exec_time::numeric, 1) AS max_ms, rows,
		left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS query FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$DB') ORDER BY total_exec_time DESC LIMIT 10" || true
fi
