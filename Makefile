# svc — see README.md. `make run` starts svc; `make test` runs every test.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
export SVC_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
# -trimpath: compiled packages are cached by content, not by the checkout's
# directory, so a fresh clone (CI's) reuses what an earlier build of the
# same sources compiled instead of compiling every svc package again; the
# binaries carry module-relative file names (reproducible builds).
export GOFLAGS += -trimpath

.PHONY: run build build-boring image test test-deps bench bench-go bench-compare fuzz lint generate clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/svc ./cmd/svc

# svc with Go's BoringCrypto module (GOEXPERIMENT=boringcrypto): RSA signing
# and verification by BoringSSL's FIPS module, about twice as fast here
# (BENCHMARKS.md, Authentication). Needs cgo and a C toolchain; the binary
# links glibc dynamically. The default build stays pure Go
# (docs/decisions/0038-boringcrypto-build-option.md).
build-boring:
	CGO_ENABLED=1 GOEXPERIMENT=boringcrypto $(GO) build -ldflags "$(LDFLAGS)" -o bin/svc-boring ./cmd/svc

run: build
	./bin/svc

# The container image, stamped like `make build` (Dockerfile); needs a
# container engine that can pull the base images.
image:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg BUILD_DATE=$(BUILD_DATE) -t svc:$(VERSION) .

# Every test, with the race detector, after `make lint` (so CI, which runs
# `make test`, enforces gofmt, vet, golangci-lint with the layer rules, a
# tidy go.mod and current generated files). test-deps installs what the
# end-to-end tests need on a fresh machine (headless Chromium for the /docs
# page). -vet=off: lint has just run the whole `go vet` suite over every
# package and its tests, a superset of the checks `go test` would run again.
# The pure-Go SQLite driver (modernc.org/...) is compiled without checkptr,
# still with -race (docs/decisions/0041-tests-without-checkptr-in-sqlite-driver.md).
# -timeout 30m per package: on a machine shared with a dozen other jobs a
# package's tests have taken over 12 minutes (two timed out at 12m on a
# fresh machine at load 15-22); a hang still ends well inside CI's hour.
# -p 4 -parallel 4: four packages, and four parallel tests in each, at a
# time on two cores. The suite waits (PostgreSQL's CREATE DATABASE, gRPC's
# ping floor, child processes, timeouts) as much as it computes: with the
# default two at a time, a quiet warm run's test step used 1.1 of its 2
# cores and took 315 s, against 213 s here (docs/decisions/0042-test-parallelism.md).
test: test-deps lint
	$(GO) test -race -count=1 -vet=off -timeout 30m -p 4 -parallel 4 -gcflags='modernc.org/...=-d=checkptr=0' ./...

test-deps:
	@bash scripts/test-deps.sh

# The load scenarios as users meet them (jwt mode, real tokens, TCP
# loopback, fresh server and database per run; bench/suite), each figure
# beside yardsticks measured in the same run. BENCH_ARGS, e.g.
# "-set quick -d 3s" or "-rounds 3"; see BENCHMARKS.md.
BENCH_ARGS ?=
bench:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/svc ./cmd/svc
	$(GO) build -o bin/loadgen ./bench/loadgen
	$(GO) run ./bench/suite -svc bin/svc -loadgen bin/loadgen $(BENCH_ARGS)

# Every `go test -bench` benchmark with -benchmem (what `make bench` was).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1s ./...

# Same-run comparison of the base commit and the working tree, alternated:
# make bench-compare BASE=<commit> [ROUNDS=3] [D=5s]. See BENCHMARKS.md.
BASE ?=
ROUNDS ?= 3
D ?= 5s
bench-compare:
	@test -n "$(BASE)" || { echo "make bench-compare BASE=<commit>"; exit 2; }
	ROUNDS=$(ROUNDS) D=$(D) bash scripts/bench-compare.sh $(BASE)

# Short runs of every fuzz target, going on past failures and listing them
# all at the end (exit 1 if any); FUZZTIME=5m for a longer soak, FUZZ=regex
# to keep the targets whose "importpath FuzzName" matches.
FUZZTIME ?= 10s
FUZZ ?=
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME) '$(FUZZ)'

# gofmt, go vet, `go mod tidy -diff` and golangci-lint (.golangci.yml; the
# layer rules of docs/ARCHITECTURE.md are its depguard rules), then the
# generated files and the docs tests. With cgo off, as svc ships (the
# Dockerfile) and as cmd/svc's real-binary tests build it: the packages
# vet compiles are then the ones that build reuses instead of compiling
# the whole tree a second time (svc has no cgo code).
LINT_ENV := CGO_ENABLED=0
lint:
	@$(LINT_ENV) GO=$(GO) bash scripts/lint.sh
	$(LINT_ENV) $(GO) run ./docs/gen -check
	$(LINT_ENV) $(GO) test -count=1 ./docs/

# Files generated from svc's own code (docs/CONTRIBUTING.md): docs/operations.md
# from the route table, fast/testdata/openapi.golden.json (the OpenAPI
# document as served), the README's configuration tables and the variable
# lists of help/topics/config/*.md from platform/config. Run after changing a
# route, an operation's docs or a setting; `make lint` and `make test` fail
# while they are stale.
generate:
	$(GO) generate ./docs/gen

clean:
	rm -rf bin
