# svc container image: a static binary on a distroless base, run as a
# non-root user. `svc help cluster` shows the 3-node compose file
# (deploy/compose.yaml) that uses it.
#   docker build -t svc \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg COMMIT="$(git rev-parse --short HEAD)" \
#     --build-arg BUILD_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
# (`make image` passes the same three values `make build` stamps.)
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# `svc version` prints these; without them it says "dev (commit unknown)".
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
# CGO off: a static binary that needs no libc in the runtime image.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildDate=${BUILD_DATE}" \
      -o /out/svc ./cmd/svc

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/svc /svc
# 65532 is distroless's "nonroot".
USER 65532:65532
# HTTP API, gRPC (compute members), admin (health, metrics), gossip.
EXPOSE 8080 9090 9091 7946/tcp 7946/udp
# In a container every listener must accept traffic from outside it; the
# admin listener still carries no API (health and metrics only). svc then
# refuses to start in its default mock auth mode (an open admin API behind
# `docker run -p`): pass SVC_IAM_MODE=jwt, or SVC_IAM_MODE=mock to say so.
ENV SVC_HTTP_BIND_ADDRESS=* \
    SVC_GRPC_BIND_ADDRESS=* \
    SVC_ADMIN_BIND_ADDRESS=0.0.0.0 \
    SVC_GOSSIP_ADDR=0.0.0.0:7946
# `svc health` probes /readyz on 127.0.0.1 (database and membership).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["/svc", "health"]
ENTRYPOINT ["/svc"]
CMD ["serve"]
