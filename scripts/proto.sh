#!/usr/bin/env bash
# Regenerates the gRPC code of compute/ from compute/proto. Needs protoc
# (Debian: protobuf-compiler) and the Go plugins:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
# The generated files are committed, so building svc never needs this.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
protoc -I compute/proto \
  --go_out="$out" --go-grpc_out="$out" \
  compute/proto/cloudevents/cloudevents.proto \
  compute/proto/cyoda/cyoda-cloud-api.proto \
  compute/proto/changefeed/entity-change.proto
rm -rf compute/pb
mkdir -p compute/pb
cp -r "$out"/svc/compute/pb/. compute/pb/
gofmt -w compute/pb
echo "generated: $(find compute/pb -name '*.go' | sort | tr '\n' ' ')"
