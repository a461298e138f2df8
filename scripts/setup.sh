#!/usr/bin/env bash
# Installs what the project needs on this machine (idempotent); sourced by start.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PNPM_VERSION=10.34.8
if ! command -v pnpm >/dev/null || [ "$(pnpm --version)" != "$PNPM_VERSION" ]; then
  echo "==> installing pnpm $PNPM_VERSION"
  npm install --global --silent "pnpm@$PNPM_VERSION"
fi

# Debian packages the tests and the renderer use; installed once, as root, when missing.
missing=()
# The renderer's Chromium is the headless shell (apps/scraper-worker/src/config.ts); the console's
# browser test drives the full one.
[ -x "${CHROMIUM_PATH:-/usr/lib/chromium/chromium-headless-shell}" ] || missing+=(chromium-headless-shell)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
command -v psql >/dev/null || missing+=(postgresql-client)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing ${missing[*]} (Debian packages)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "Missing: ${missing[*]}. Install them (Debian: apt-get install ${missing[*]}) or set CHROMIUM_PATH." >&2
    exit 1
  fi
fi

echo "==> installing dependencies (Node 24 comes with them)"
# Chromium comes from the system, never from puppeteer's own download.
export PUPPETEER_SKIP_DOWNLOAD=true
pnpm install --frozen-lockfile --reporter=silent

# Prisma's CLI fetches a schema engine that `generate` does not run; any executable will do.
echo "==> generating the Prisma client"
PRISMA_SCHEMA_ENGINE_BINARY="${PRISMA_SCHEMA_ENGINE_BINARY:-$(type -P true)}" pnpm exec prisma generate >/dev/null

open_port() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# PostgreSQL and Redis: on a Debian or Ubuntu machine that has neither the server nor anything
# listening on its port, installed (as root with apt) and set up for local use: the local user
# `root` may connect over 127.0.0.1 without a password, as the default DATABASE_URL does.
servers=()
if [ -z "${DATABASE_URL:-}" ] && [ ! -d /etc/postgresql ] && ! open_port 127.0.0.1 5432; then servers+=(postgresql); fi
if [ -z "${REDIS_URL:-}" ] && ! command -v redis-server >/dev/null && ! open_port 127.0.0.1 6379; then servers+=(redis-server); fi
if [ ${#servers[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "==> installing ${servers[*]} (Debian packages)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${servers[@]}" >/dev/null
  if [[ " ${servers[*]} " == *" postgresql "* ]]; then
    version=$(ls /etc/postgresql | head -1)
    hba=/etc/postgresql/$version/main/pg_hba.conf
    grep -q '^host all root 127.0.0.1/32 trust' "$hba" || sed -i '1i host all root 127.0.0.1/32 trust' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || pg_ctlcluster --skip-systemctl-redirect "$version" main reload
    su postgres -c "psql -qc \"DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'root') THEN CREATE ROLE root SUPERUSER LOGIN; END IF; END \\\$\\\$\"" >/dev/null
  fi
fi

need_service() { # name host port start-command
  if ! open_port "$2" "$3"; then
    if [ -n "$4" ] && command -v "${4%% *}" >/dev/null; then
      echo "==> starting $1"
      eval "$4" >/dev/null
    fi
    for _ in $(seq 1 30); do open_port "$2" "$3" && return 0; sleep 0.5; done
    echo "$1 is not reachable on $2:$3. Install and start it, or run: docker compose up -d postgres redis" >&2
    exit 1
  fi
}
if [ -z "${DATABASE_URL:-}" ]; then
  need_service PostgreSQL 127.0.0.1 5432 "$( [ -d /etc/postgresql ] && echo "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | head -1) main start" )"
fi
if [ -z "${REDIS_URL:-}" ]; then
  need_service Redis 127.0.0.1 6379 "redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no"
fi
