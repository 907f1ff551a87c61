# fluxgit container image: a static fluxgit and git on Debian slim, run as a
# non-root user.
#
#   docker build -t fluxgit .
#   docker run -i --rm -v "$PWD:/repos/work" fluxgit            # MCP over stdio
#
# The default command serves MCP on stdin/stdout (an MCP host starts the
# container with `docker run -i`). HTTP is not the default because fluxgit
# refuses to listen on a non-loopback address without authentication, and a
# loopback listener inside a container cannot be reached from outside it; see
# README.md "Container image" for `docker run` lines serving HTTP with jwt.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Empty: the binary reports cmd/fluxgit/VERSION with -dev; a release passes
# --build-arg VERSION=X.Y.Z (scripts/release.sh names the canonical one).
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -buildid= -X main.version=${VERSION}" \
      -o /out/fluxgit ./cmd/fluxgit

FROM debian:bookworm-slim
# The MCP Registry accepts server.json's OCI packages only from an image
# carrying the entry's name in this label (README.md, "MCP Registry").
LABEL io.modelcontextprotocol.server.name="io.github.fluxgit/fluxgit"
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 fluxgit \
 && useradd --system --uid 10001 --gid fluxgit --home-dir /var/lib/fluxgit --shell /usr/sbin/nologin fluxgit \
 && install -d -o fluxgit -g fluxgit -m 0700 /var/lib/fluxgit /var/lib/fluxgit/run /var/lib/shift-mcp-server \
 && install -d -o fluxgit -g fluxgit -m 0755 /repos
COPY --from=build /out/fluxgit /usr/local/bin/fluxgit
# State under /var/lib/fluxgit (run directory: registry, restore points, audit
# ledger), the shift roster under /var/lib/shift-mcp-server, repositories
# mounted under /repos (the only allowed root).
ENV HOME=/var/lib/fluxgit \
    FLUXGIT_RUN_DIR=/var/lib/fluxgit/run \
    SHIFT_STATE_DIR=/var/lib/shift-mcp-server \
    FLUXGIT_MCP_ALLOWED_ROOTS=/repos \
    FLUXGIT_MCP_GIT_PATH=/usr/bin/git \
    MCP_HTTP_PORT=3010
VOLUME ["/var/lib/fluxgit", "/var/lib/shift-mcp-server"]
EXPOSE 3010
USER fluxgit:fluxgit
WORKDIR /repos
ENTRYPOINT ["/usr/local/bin/fluxgit"]
CMD ["serve"]
