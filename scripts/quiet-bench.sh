#!/bin/bash
# Repeats bench/loadgen runs against a fresh svc in jwt mode (real tokens,
# TCP loopback), recording the load average before each run, the load
# generator's own CPU (/usr/bin/time) and, beside every run, the
# yardsticks of bench/suite measured right then: an RSA-2048 signature, on
# PostgreSQL a bare INSERT of an order (autocommit and 1,000-row), and
# svc's /health CPU per request. For the whole set of scenarios with the
# multiples worked out, use `make bench` (bench/suite).
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
go build -o /tmp/suite-quiet ./bench/suite
KEY=$(mktemp /tmp/quiet-bench-key.XXXXXX)
trap 'rm -f "$KEY"' EXIT
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$KEY" 2>/dev/null
export LOADGEN_CLIENT_ID=quietbench LOADGEN_CLIENT_SECRET
LOADGEN_CLIENT_SECRET=$(openssl rand -hex 24)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for i in $(seq 1 "$RUNS"); do
	DB=quietbench_$$_$i
	HTTP=$(port); ADMIN=$(port); GRPC=$(port)
	YARD_PG=(-no-pg)
	if [ "$BE" = postgres ]; then
		psql "$PG_BASE/postgres" -qc "CREATE DATABASE $DB"
		ENVS="SVC_STORAGE_BACKEND=postgres SVC_POSTGRES_URL=$PG_BASE/$DB?sslmode=disable"
		YARD_PG=(-pg-private=false -pg "$PG_BASE")
		if [ -n "${PG_DATA:-}" ]; then YARD_PG+=(-pg-data "$PG_DATA"); fi
	else
		ENVS="SVC_STORAGE_BACKEND=memory"
	fi
	/tmp/suite-quiet -yardsticks "${YARD_PG[@]}" 2>&1 | grep yardsticks || /tmp/suite-quiet -yardsticks -no-pg | grep yardsticks
	env $ENVS SVC_HTTP_PORT=$HTTP SVC_ADMIN_PORT=$ADMIN SVC_GRPC_PORT=$GRPC \
		SVC_IAM_MODE=jwt SVC_JWT_SIGNING_KEY_FILE="$KEY" SVC_BOOTSTRAP_CLIENT_ID=$LOADGEN_CLIENT_ID \
		SVC_BOOTSTRAP_CLIENT_SECRET=$LOADGEN_CLIENT_SECRET \
		SVC_SUPPRESS_BANNER=true SVC_LOG_LEVEL=error /tmp/svc-quiet &
	SPID=$!
	for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$HTTP/api/health" >/dev/null && break; sleep 0.2; done
	PGPID=0
	if [ "$BE" = postgres ] && [ -n "${PG_DATA:-}" ]; then PGPID=$(head -1 "$PG_DATA/postmaster.pid"); fi
	echo "== $BE $SC -c $C -d $D run $i (jwt mode); $(uptime); svc idle $(grep VmRSS /proc/$SPID/status)"
	/usr/bin/time -f "loadgen cpu: user %U s, sys %S s" /tmp/loadgen-quiet -url "http://127.0.0.1:$HTTP/api" \
		-scenario "$SC" -c "$C" -d "$D" -svc-pid $SPID -pg-pid $PGPID
	echo "svc rss after: $(grep VmRSS /proc/$SPID/status)"
	echo -n "yardstick /health -c 16 3s: "
	/tmp/loadgen-quiet -url "http://127.0.0.1:$HTTP/api" -scenario health -c 16 -d 3s -svc-pid $SPID | grep "server CPU"
	kill $SPID; wait $SPID 2>/dev/null || true
	if [ "$BE" = postgres ]; then psql "$PG_BASE/postgres" -qc "DROP DATABASE $DB WITH (FORCE)"; fi
done
