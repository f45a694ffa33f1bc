# lnk: one executable, one SQLite file. Build:  docker build -t lnk .
# Run:    docker run -d --name lnk -p 8080:8080 -v lnk-data:/data -e LNK_BASE_URL=https://lnk.example.com lnk
# Admin:  docker exec lnk lnk admin bootstrap --email you@example.com --workspace Acme
# PostgreSQL (several nodes): the same image with -e LNK_DATABASE_URL=postgres://…; no volume is needed then
#         (deploy/compose.postgres.yml, docs/scale-out.md).
# Compose: deploy/compose.yml (one node, a named volume; + deploy/compose.tls.yml for Caddy and HTTPS).
# Stop:   lnk drains in-flight work for up to LNK_SHUTDOWN_TIMEOUT_SECONDS (10 s) after SIGTERM, the same as
#         docker's default grace period; give docker more room (docker stop -t 20, compose
#         stop_grace_period: 20s) so it never has to SIGKILL.
# CI builds this file with podman and runs the image (scripts/image/ci.sh); all of it: docs/docker.md.

# ---- build: compile dist/lnk with the pinned Bun (keep in step with the bun devDependency) -------------
FROM oven/bun:1.4.5 AS build
WORKDIR /src
# Dependencies first, so the layer is reused until package.json or bun.lock change. devDependencies too:
# scripts/build bundles the console (web/console imports preact and uplot, both devDependencies), and a
# frozen install needs the folder devDependency test/setup/openapi-typescript-ts5 present. None of it
# reaches the runtime stage: only dist/lnk is copied there.
COPY package.json bun.lock bunfig.toml ./
COPY test/setup/openapi-typescript-ts5/ ./test/setup/openapi-typescript-ts5/
RUN bun install --frozen-lockfile
COPY . .
# scripts/build also runs the fresh binary alone in an empty directory (`lnk migrate`) and fails if it
# cannot stand on its own.
RUN bash scripts/build

# ---- runtime: glibc (the compiled Bun executable needs it), no Bun, no Node -------------------------------
FROM debian:bookworm-slim
LABEL org.opencontainers.image.title="lnk" \
      org.opencontainers.image.description="Self-hosted link shortener: one Bun process, one SQLite file, one executable."

RUN groupadd --system --gid 10001 lnk \
 && useradd --system --uid 10001 --gid lnk --home-dir /data --no-create-home --shell /usr/sbin/nologin lnk \
 && mkdir -p /data \
 && chown lnk:lnk /data \
 && chmod 0750 /data

COPY --from=build /src/dist/lnk /usr/local/bin/lnk

ENV LNK_DATA_DIR=/data \
    LNK_HOST=0.0.0.0 \
    LNK_PORT=8080

USER lnk
# Relative paths given to the CLI (e.g. `lnk admin backup lnk-backup.db`) land in the volume.
WORKDIR /data
# Declared after the chown so a new named volume starts out owned by lnk (uid 10001). A bind-mounted
# host directory must be writable by uid 10001.
VOLUME /data
EXPOSE 8080

# Health = GET /readyz answers 200 (the process serves and the database answers). The probe is plain bash
# (/dev/tcp), so the image needs no curl or wget; it follows LNK_PORT if that is overridden.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${LNK_PORT:-8080} && printf 'GET /readyz HTTP/1.0\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r -t 4 _ code _ <&3 && [ \"$code\" = 200 ]"]

# lnk handles SIGTERM/SIGINT itself (drain, flush clicks, checkpoint the WAL), so it runs as PID 1
# directly; it starts no child processes, so no init is needed to reap them.
ENTRYPOINT ["/usr/local/bin/lnk"]
CMD ["serve"]
