# syntax=docker/dockerfile:1
#
# cadre in a container: both programs, git (worktree isolation runs it) and
# CA certificates (provider APIs, MCP and A2A over HTTPS), as a user without
# root.
#
#   docker build -t cadre .
#   docker run --rm -it -e ANTHROPIC_API_KEY -v "$PWD:/work" cadre --model sonnet
#   docker run --rm -p 8420:8420 -e ANTHROPIC_API_KEY -e CADRE_SERVE_TOKEN -v "$PWD:/work" \
#     cadre serve --addr 0.0.0.0:8420 --model sonnet
#
# git refuses a repository that another user owns ("dubious ownership"), and
# with it worktree isolation: where your uid is not 10001, add
# `--user "$(id -u):$(id -g)" -e CADRE_HOME=/tmp/cadre-home` (or a volume) to
# run as the mounted project's owner.
#
# The sandbox (docs/security.md) needs Landlock and, for a user without root,
# unprivileged user namespaces, which a container runtime's default seccomp
# profile may refuse; `cadre sandbox status` in the container says what holds.

# The module's go directive is 1.26.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static, as the release build (.goreleaser.yaml). From a clone's context,
# .git comes along so that the go command records the commit in the build
# info (`go version -m /usr/local/bin/cadre`). --build-arg VERSION=v1.2.3
# sets the version `cadre --version` prints, as a release build does.
ENV CGO_ENABLED=0
ARG VERSION=
RUN go build -trimpath -ldflags="-s -w ${VERSION:+-X github.com/cadre-dev/cadre/internal/version.release=$VERSION}" -o /out/ ./cmd/cadre ./cmd/cadre-sandbox

FROM debian:trixie-slim
# bash is already there: cadre's Bash tool prefers it to sh, and models write
# bash.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 --shell /bin/bash cadre \
 && mkdir /work && chown cadre:cadre /work
# The launcher must sit in the same directory as cadre: cadre looks for it
# nowhere else.
COPY --from=build /out/cadre /out/cadre-sandbox /usr/local/bin/
USER cadre
ENV CADRE_HOME=/home/cadre/.cadre
WORKDIR /work
EXPOSE 8420
ENTRYPOINT ["cadre"]
