#!/usr/bin/env bash
# Runs every fuzz target for a short time each: scripts/fuzz.sh [duration].
set -euo pipefail
t=${1:-10s}
found=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    found=1
    echo "== $pkg $fn ($t)"
    go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "$pkg"
  done
done
[ "$found" = 1 ] || echo "no fuzz targets"
