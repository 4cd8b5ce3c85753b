#!/bin/bash
# Builds svc at a base commit (in a temporary git worktree) and from the
# working tree, then runs bench/suite's compare set against both in
# alternation (A B, then B A, each round), fresh server and database for
# every run, and prints each scenario's svc (+ PostgreSQL) CPU per request
# for both with the noise, and benchstat's comparison when benchstat is
# installed (go install golang.org/x/perf/cmd/benchstat@latest).
#
#   scripts/bench-compare.sh BASE      (make bench-compare BASE=<commit>)
#
# ROUNDS (default 3) and D (load time per run, default 5s); SUITE_ARGS are
# passed on (e.g. "-no-pg", "-set all", "-scenarios token/memory").
set -euo pipefail
BASE=${1:?base commit}
ROUNDS=${ROUNDS:-3}; D=${D:-5s}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d /tmp/bench-compare.XXXXXX)
cleanup() { git worktree remove --force "$TMP/base" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
REV=$(git rev-parse --short "$BASE")
HEAD_REV=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo "+dirty")
git worktree add --detach -q "$TMP/base" "$REV"
echo "building base $REV and head $HEAD_REV (working tree)"
(cd "$TMP/base" && go build -o "$TMP/svc-base" ./cmd/svc)
go build -o "$TMP/svc-head" ./cmd/svc
go build -o "$TMP/loadgen" ./bench/loadgen
go build -o "$TMP/suite" ./bench/suite
mkdir -p "$TMP/out"
echo "base $REV, head $HEAD_REV; $ROUNDS rounds of $D per run; $(uptime)"
"$TMP/suite" -svc "base=$TMP/svc-base,head=$TMP/svc-head" -loadgen "$TMP/loadgen" -set compare \
	-rounds "$ROUNDS" -d "$D" -out "$TMP/out" ${SUITE_ARGS:-}
