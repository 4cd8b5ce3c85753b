#!/usr/bin/env bash
# `make lint`: gofmt, go vet, go mod tidy -diff, then golangci-lint (.golangci.yml: staticcheck,
# errorlint, revive, and depguard carrying the layer rules of
# docs/ARCHITECTURE.md). golangci-lint is built from the Go module proxy at
# the pinned version on first use (a fresh machine needs only Go); its
# analysis cache (~/.cache/golangci-lint) keeps later runs fast.
set -euo pipefail
cd "$(dirname "$0")/.."

GOLANGCI_LINT_VERSION=v2.15.0
GO=${GO:-go}

out=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$out" ]; then
  echo "gofmt needed:"
  echo "$out"
  exit 1
fi
$GO vet ./...

# go.mod and go.sum say exactly what the build needs (a dependency marked
# indirect that is imported directly, or a stale sum, fails here).
if ! tidy=$($GO mod tidy -diff 2>&1); then
  echo "go mod tidy needed:"
  echo "$tidy"
  exit 1
fi

bin="$($GO env GOPATH)/bin/golangci-lint"
if ! "$bin" version 2>/dev/null | grep -q " ${GOLANGCI_LINT_VERSION#v} "; then
  echo "lint: building golangci-lint $GOLANGCI_LINT_VERSION from the Go module proxy (once per machine)"
  $GO install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
fi
"$bin" run ./...
