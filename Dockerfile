# syntax=docker/dockerfile:1
#
# One multi-stage build with a runtime target per process:
#
#   docker build --target api            -t scrapejobs/api .             # also runs the migrations
#   docker build --target scraper-worker -t scrapejobs/scraper-worker .  # adds Debian's Chromium and fonts
#   docker build --target webhook-worker -t scrapejobs/webhook-worker .
#
# Node 24 runs the TypeScript sources directly (type stripping), so nothing is compiled: each image
# holds the workspace sources, the production dependencies of its app and the generated Prisma
# client. The build reaches only the npm registry and Debian's archive: puppeteer's browser download
# is skipped (Chromium is Debian's) and Prisma's schema engine is never fetched (`prisma generate`
# does not run it, as in scripts/setup.sh). test/infra/manifests.test.ts checks that every COPY
# source exists, that the stages line up and that every command points at a file that exists.
# Operations: infra/README.md.

# ---------------------------------------------------------------------------------------------
# Build stages
# ---------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS base
ENV CI=true \
    PUPPETEER_SKIP_DOWNLOAD=true \
    PRISMA_SCHEMA_ENGINE_BINARY=/bin/true
RUN npm install --global --no-fund --no-audit pnpm@10.34.8
WORKDIR /app

# The workspace manifests alone (the globs of pnpm-workspace.yaml), so that the install layers below
# are rebuilt when dependencies change and not when sources do. Copying the whole context into a
# throw-away stage first picks up new workspace packages without editing this file; the layer
# taken from here changes only when a manifest does.
FROM base AS manifests
COPY . /context
RUN mkdir -p /manifests \
 && cd /context \
 && cp --parents package.json pnpm-lock.yaml pnpm-workspace.yaml apps/*/package.json packages/*/package.json /manifests/

# Every dependency (the Prisma CLI is a dev dependency), then the Prisma client, which is generated
# into packages/db/src/generated (not in git).
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=scrapejobs-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store
COPY prisma.config.ts ./
COPY prisma ./prisma
RUN pnpm exec prisma generate

# Production dependencies of one app and the workspace packages it uses (`--filter <app>...`).
FROM base AS prod-deps-api
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=scrapejobs-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --store-dir /pnpm/store --filter "@scrapejobs/api..."

FROM base AS prod-deps-scraper-worker
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=scrapejobs-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --store-dir /pnpm/store --filter "@scrapejobs/scraper-worker..."

FROM base AS prod-deps-webhook-worker
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=scrapejobs-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --store-dir /pnpm/store --filter "@scrapejobs/webhook-worker..."

# ---------------------------------------------------------------------------------------------
# Runtime images: no pnpm, no dev dependencies; files owned by root and read-only for the app
# user `node` (uid 1000, from the base image), which runs the process. The API comes last, so a
# plain `docker build .` gives the API image.
# ---------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app

FROM runtime AS scraper-worker
# Debian's Chromium headless shell (puppeteer's own download is skipped; bench/README.md says why
# not the full browser), fonts for Latin scripts and emoji, and tini as PID 1 to forward SIGTERM
# and reap Chromium's child processes.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium-headless-shell fonts-liberation fonts-noto-color-emoji tini \
 && rm -rf /var/lib/apt/lists/*
# Chromium's profile, crash and font caches go to /tmp, the one writable place with a read-only
# root filesystem (Kubernetes mounts an emptyDir there; compose a tmpfs).
ENV CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell \
    XDG_CONFIG_HOME=/tmp/.chromium \
    XDG_CACHE_HOME=/tmp/.chromium
# The young generation of the worker's `start` script (apps/scraper-worker/package.json): with
# V8's larger default one the worker runs a full collection after another (bench/README.md, "A
# full collection after another"). The heap itself is bounded by the pod's memory limit.
ENV NODE_OPTIONS="--max-semi-space-size=8"
COPY --from=prod-deps-scraper-worker /app/ ./
COPY packages ./packages
COPY apps ./apps
COPY --from=build /app/packages/db/src/generated ./packages/db/src/generated
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER node
EXPOSE 9100
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "METRICS_PORT", "9100", "/ready"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/scraper-worker/src/main.ts"]

FROM runtime AS webhook-worker
COPY --from=prod-deps-webhook-worker /app/ ./
COPY packages ./packages
COPY apps ./apps
COPY --from=build /app/packages/db/src/generated ./packages/db/src/generated
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER node
EXPOSE 9100
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "METRICS_PORT", "9100", "/ready"]
CMD ["node", "apps/webhook-worker/src/main.ts"]

FROM runtime AS api
# The heap sizing of the API's `start` script (apps/api/package.json, scripts/start.sh): an 8 MB
# young generation keeps streamed downloads near 210-220 MB RSS, and the 384 MB old-space cap
# (heap limit 408 MiB) stays under the 512 MiB memory limit of infra/k8s/api.yaml, leaving ~100 MiB
# for buffers and native memory. As NODE_OPTIONS it reaches every way the image is started
# (compose, Kubernetes, `docker run`); the migrations and the health check run with it too.
ENV NODE_OPTIONS="--max-semi-space-size=8 --max-old-space-size=384"
COPY --from=prod-deps-api /app/ ./
COPY prisma ./prisma
COPY packages ./packages
COPY apps ./apps
COPY --from=build /app/packages/db/src/generated ./packages/db/src/generated
COPY infra/docker/healthcheck.mjs ./infra/docker/healthcheck.mjs
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "PORT", "3000", "/ready"]
# The same image runs the migrations: node apps/api/src/cli/migrate.ts
CMD ["node", "apps/api/src/main.ts"]
