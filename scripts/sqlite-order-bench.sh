#!/bin/bash
# Runs one bench/loadgen scenario against a fresh svc on a fresh SQLite file
# (or on memory, for comparison) and prints the rate, latency and the CPU
# svc spent per request (or entity), as BENCHMARKS.md's "Order workload on
# SQLite" section was measured. The load average is printed beside it: the
# machine is shared.
#
#   scripts/sqlite-order-bench.sh SCENARIO [CONCURRENCY] [DURATION] [ENGINE]
#
# ENGINE is sqlite (default) or memory. SQLITE_DIR is where the file goes
# (default a new directory under /tmp; removed afterwards unless KEEP=1).
# PRELOAD=N first creates N orders with order-collection (for the "flat
# from 0 to 1,000,000" rows); the scenario then runs on top of them.
set -euo pipefail
SC=${1:?scenario}; C=${2:-16}; D=${3:-10s}; ENGINE=${4:-sqlite}
cd "$(dirname "$0")/.."
go build -o /tmp/svc-sqlitebench ./cmd/svc
go build -o /tmp/loadgen-sqlitebench ./bench/loadgen
DIR=${SQLITE_DIR:-$(mktemp -d /tmp/sqlitebench.XXXXXX)}
cleanup() { kill -TERM $SPID 2>/dev/null; wait $SPID 2>/dev/null || true; if [ "${KEEP:-}" != 1 ]; then rm -rf "$DIR"; fi; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HTTP=$(port); ADMIN=$(port); GRPC=$(port)
SVC_STORAGE_BACKEND=$ENGINE SVC_SQLITE_PATH="$DIR/svc.db" SVC_HTTP_PORT=$HTTP SVC_ADMIN_PORT=$ADMIN \
	SVC_GRPC_PORT=$GRPC SVC_SUPPRESS_BANNER=true SVC_ADMIN_PPROF=true SVC_LOG_LEVEL=warn /tmp/svc-sqlitebench &
SPID=$!
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$HTTP/api/health" >/dev/null && break; sleep 0.2; done
if [ -n "${PRELOAD:-}" ]; then
	/tmp/loadgen-sqlitebench -url "http://127.0.0.1:$HTTP/api" -scenario order-collection -c 2 -n $(( PRELOAD / 1000 )) -d 1h >/dev/null
	echo "preloaded $PRELOAD orders"
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/tmp/loadgen-sqlitebench -url "http://127.0.0.1:$HTTP/api" -scenario "$SC" -c "$C" -d "$D" -svc-pid $SPID
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$ENGINE" = sqlite ]; then ls -l "$DIR"; fi
