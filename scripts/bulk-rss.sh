#!/usr/bin/env bash
# Peak RSS of svc while one request streams a large NDJSON body into
# PostgreSQL (docs/benchmarks-history.md, "Bulk import and export"; the row in
# BENCHMARKS.md).
#   scripts/bulk-rss.sh [bytes]   (default 1 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-1073741824}
pg=${SVC_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
db=svc_bulk_rss_$$
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; psql "$pg" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; rm -rf "$work"' EXIT
go build -o "$work/svc" ./cmd/svc
go run ./bench/ndjsongen -bytes "$bytes" > "$work/orders.ndjson"
psql "$pg" -qc "CREATE DATABASE $db"
url=$(python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path='/$db').geturl())" "$pg")
port=$((20000 + RANDOM % 20000)); admin=$((port + 1))
SVC_STORAGE_BACKEND=postgres SVC_POSTGRES_URL="$url" SVC_HTTP_PORT=$port SVC_ADMIN_PORT=$admin SVC_GRPC_PORT=$((port + 2)) \
  SVC_SUPPRESS_BANNER=true SVC_LOG_LEVEL=error "$work/svc" serve &
pid=$!
for _ in $(seq 200); do curl -sf "localhost:$admin/readyz" >/dev/null && break; sleep 0.1; done
head -100 "$work/orders.ndjson" > "$work/sample.ndjson"
"$work/svc" import --url "http://127.0.0.1:$port/api" --model orders/1 --create-model --progress none "$work/sample.ndjson"
idle=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
cpu0=$(awk '{print $14+$15}' /proc/$pid/stat); t0=$(date +%s.%N)
curl -sf -X POST -T "$work/orders.ndjson" -H 'Content-Type: application/x-ndjson' \
  "http://127.0.0.1:$port/api/entity/ndjson/orders/1?transactionWindow=1000" | head -c 120; echo
t1=$(date +%s.%N); cpu1=$(awk '{print $14+$15}' /proc/$pid/stat)
peak=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
echo "idle RSS $((idle / 1024)) MiB, peak $((peak / 1024)) MiB, peak above idle $(((peak - idle) / 1024)) MiB;" \
  "wall $(echo "$t1 - $t0" | bc) s, svc CPU $(((cpu1 - cpu0) / 100)) s"
