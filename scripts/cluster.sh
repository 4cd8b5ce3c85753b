#!/usr/bin/env bash
# Starts an N-node svc cluster on loopback against one PostgreSQL database
# and keeps it running until Ctrl-C (or SIGTERM), which stops the nodes it
# started. `svc help cluster` explains what each node is given.
#
#   scripts/cluster.sh [N]        (default 3)
#
# Environment:
#   SVC_POSTGRES_URL    database of the cluster (default: the database
#                       "svc_cluster" of the local server, sslmode=disable,
#                       created with psql when it does not exist; svc's
#                       tables never go into the "postgres" maintenance
#                       database)
#   SVC_HMAC_SECRET     64 hex characters shared by the nodes (default: a
#                       fresh random one for this run)
#   CLUSTER_BASE_PORT   node i (1..N) listens on HTTP BASE+i, gRPC BASE+100+i,
#                       admin BASE+200+i, gossip BASE+300+i (default 18000)
#   CLUSTER_DIR         where logs go (default .cluster/)
#   SVC_BIN             the svc binary (default: build bin/svc)
# Any other SVC_* variable in the environment reaches every node.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/cluster.sh [N]" >&2
  exit 2
fi
base=${CLUSTER_BASE_PORT:-18000}
dir=${CLUSTER_DIR:-.cluster}
url=${SVC_POSTGRES_URL:-}
if [[ -z $url ]]; then
  url=postgres://postgres@127.0.0.1:5432/svc_cluster?sslmode=disable
  maint=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
  if ! psql "$maint" -tAc "SELECT 1 FROM pg_database WHERE datname = 'svc_cluster'" 2>/dev/null | grep -q 1; then
    psql "$maint" -qc "CREATE DATABASE svc_cluster" || {
      echo "cannot create database svc_cluster; create one for svc and set SVC_POSTGRES_URL" >&2
      exit 1
    }
  fi
fi
secret=${SVC_HMAC_SECRET:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}
bin=${SVC_BIN:-}
if [[ -z $bin ]]; then
  go build -o bin/svc ./cmd/svc
  bin=bin/svc
fi
mkdir -p "$dir"

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "cluster stopped"
  exit 0
}
trap stop INT TERM EXIT

seed="127.0.0.1:$((base + 301))"
for i in $(seq 1 "$n"); do
  http=$((base + i)) grpc=$((base + 100 + i)) admin=$((base + 200 + i)) gossip=$((base + 300 + i))
  # SVC_BIN is the script's own, no setting of svc: the nodes never see it.
  env -u SVC_BIN SVC_STORAGE_BACKEND=postgres SVC_POSTGRES_URL="$url" \
    SVC_CLUSTER_ENABLED=true SVC_NODE_ID="node-$i" SVC_HMAC_SECRET="$secret" \
    SVC_NODE_ADDR="http://127.0.0.1:$http" SVC_GRPC_NODE_ADDR="127.0.0.1:$grpc" \
    SVC_GOSSIP_ADDR="127.0.0.1:$gossip" SVC_SEED_NODES="$seed" \
    SVC_HTTP_PORT=$http SVC_GRPC_PORT=$grpc SVC_ADMIN_PORT=$admin SVC_SUPPRESS_BANNER=true \
    "$bin" serve >"$dir/node-$i.log" 2>&1 &
  pids+=($!)
  # The first node must be up before the others join through it.
  for _ in $(seq 600); do
    if curl -sf "http://127.0.0.1:$admin/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then
      echo "node-$i exited; its log:" >&2
      cat "$dir/node-$i.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "node-$i  http://127.0.0.1:$http/api  admin 127.0.0.1:$admin  gossip 127.0.0.1:$gossip  log $dir/node-$i.log"
done
curl -s "http://127.0.0.1:$((base + 201))/readyz" | sed -n 's/^membership: /cluster: /p'
echo "Ctrl-C stops the cluster"
wait -n "${pids[@]}" || true
echo "a node exited; stopping the others" >&2
