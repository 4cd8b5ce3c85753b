#!/usr/bin/env bash
# Runs every fuzz target of the module for a short time each, going on
# after a failure, and lists every failure at the end.
#
#   scripts/fuzz.sh [duration] [filter]
#
# duration is go test's -fuzztime (default 10s; "1x" runs the seeds and
# one input). filter, an extended regular expression, keeps the targets
# whose "importpath FuzzName" it matches (default: every target).
# Exit status: 0 when every target passed, 1 when any failed or none
# matched. A target that fails on a new input leaves it in its package's
# testdata/fuzz/<target>/ directory, as go test does.
set -uo pipefail
t=${1:-10s}
filter=${2:-}

# -e: a package that does not load is listed (and its targets fail)
# instead of hiding every other package's.
if ! pkgs=$(go list -e -f '{{.ImportPath}} {{.Dir}}' ./...); then
  echo "fuzz: go list failed" >&2
  exit 1
fi

ran=0
failed=()
while read -r pkg dir; do
  [ -n "$pkg" ] || continue
  for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    if [ -n "$filter" ] && ! grep -Eq -- "$filter" <<<"$pkg $fn"; then
      continue
    fi
    ran=$((ran + 1))
    echo "== $pkg $fn ($t)"
    if ! go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "$pkg"; then
      failed+=("$pkg $fn")
    fi
  done
done <<<"$pkgs"

echo
if [ "$ran" = 0 ]; then
  echo "fuzz: no fuzz targets${filter:+ match $filter}"
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of $ran targets failed:"
  printf 'FAIL %s\n' "${failed[@]}"
  exit 1
fi
echo "fuzz: all $ran targets passed ($t each)"
