#!/bin/bash
# Repeats bench/loadgen runs against a fresh svc, recording the load average
# before each run and the load generator's own CPU (/usr/bin/time), as the
# "Issue 14 rows on a quiet box" table in docs/benchmarks-history.md (and the
# quiet-box rows of BENCHMARKS.md) were taken.
#
#   scripts/quiet-bench.sh BACKEND SCENARIO C D RUNS
#
# BACKEND is postgres (fresh database per run on PG_BASE; PG_DATA names the
# server's data directory so the postmaster and its children are counted)
# or memory (fresh server per run). Binaries are built once to /tmp.
set -euo pipefail
BE=${1:?backend}; SC=${2:?scenario}; C=${3:-16}; D=${4:-10s}; RUNS=${5:-3}
PG_BASE=${PG_BASE:-postgres://postgres@127.0.0.1:5432}
cd "$(dirname "$0")/.."
go build -o /tmp/svc-quiet ./cmd/svc
go build -o /tmp/loadgen-quiet ./bench/loadgen
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for i in $(seq 1 "$RUNS"); do
	DB=quietbench_$$_$i
	HTTP=$(port); ADMIN=$(port); GRPC=$(port)
	if [ "$BE" = postgres ]; then
		psql "$PG_BASE/postgres" -qc "CREATE DATABASE $DB"
		ENVS="SVC_STORAGE_BACKEND=postgres SVC_POSTGRES_URL=$PG_BASE/$DB?sslmode=disable"
	else
		ENVS="SVC_STORAGE_BACKEND=memory"
	fi
	env $ENVS SVC_HTTP_PORT=$HTTP SVC_ADMIN_PORT=$ADMIN SVC_GRPC_PORT=$GRPC \
		SVC_SUPPRESS_BANNER=true SVC_LOG_LEVEL=warn /tmp/svc-quiet &
	SPID=$!
	for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$HTTP/api/health" >/dev/null && break; sleep 0.2; done
	PGPID=0
	if [ "$BE" = postgres ] && [ -n "${PG_DATA:-}" ]; then PGPID=$(head -1 "$PG_DATA/postmaster.pid"); fi
	echo "== $BE $SC -c $C -d $D run $i; $(uptime)"
	/usr/bin/time -f "loadgen cpu: user %U s, sys %S s" /tmp/loadgen-quiet -url "http://127.0.0.1:$HTTP/api" \
		-scenario "$SC" -c "$C" -d "$D" -svc-pid $SPID -pg-pid $PGPID
	echo "svc rss after: $(grep VmRSS /proc/$SPID/status)"
	kill $SPID; wait $SPID 2>/dev/null || true
	if [ "$BE" = postgres ]; then psql "$PG_BASE/postgres" -qc "DROP DATABASE $DB WITH (FORCE)"; fi
done
