#!/usr/bin/env bash
# Starts the whole service on this machine: migrations, a test API key, the API and the workers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# START_SKIP_SETUP=1 skips the install step (the quick-start test runs beside other tests).
[ "${START_SKIP_SETUP:-0}" = 1 ] || source scripts/setup.sh

export DATABASE_URL="${DATABASE_URL:-postgresql://root@127.0.0.1:5432/scrapejobs}"
export PORT="${PORT:-3000}"
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://localhost:$PORT}"
export ALLOW_PRIVATE_NETWORK_TARGETS="${ALLOW_PRIVATE_NETWORK_TARGETS:-true}"

# The Node 24 of the dependencies, started directly so that a signal to this script reaches
# the processes themselves (pnpm exec does not pass SIGTERM on).
NODE=$(pnpm exec node -p process.execPath)

echo "==> applying migrations"
"$NODE" apps/api/src/cli/migrate.ts
TOKEN=$("$NODE" apps/api/src/cli/keys.ts create --user "${DEMO_USER:-demo@example.com}" --name quickstart | tail -n 1)

pids=()
stop() {
  trap - EXIT INT TERM
  kill -TERM "${pids[@]}" 2>/dev/null
  wait
}
trap 'stop; exit 0' INT TERM
trap stop EXIT
# A smaller young generation keeps streamed downloads under 256 MB (bench/README.md).
API_NODE_FLAGS=(--max-semi-space-size=8 --max-old-space-size=384)
"$NODE" "${API_NODE_FLAGS[@]}" apps/api/src/main.ts &
pids+=($!)
# The same sizing keeps the scraper worker under 300 MB in bench/fleet.ts (bench/README.md).
SCRAPER_NODE_FLAGS=(--max-semi-space-size=8 --max-old-space-size=384)
# Each worker serves /metrics on a port of its own.
METRICS_PORT="${SCRAPER_METRICS_PORT:-9101}" "$NODE" "${SCRAPER_NODE_FLAGS[@]}" apps/scraper-worker/src/main.ts &
pids+=($!)
METRICS_PORT="${WEBHOOK_METRICS_PORT:-9102}" "$NODE" apps/webhook-worker/src/main.ts &
pids+=($!)

for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 0.2; done
cat <<MSG

==> The service is running on http://localhost:$PORT (docs: http://localhost:$PORT/docs)
    A test API key for ${DEMO_USER:-demo@example.com}:

    $TOKEN

    Try it:

    curl -s -X POST http://localhost:$PORT/jobs -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
      -d '{"name":"Example","source":"https://example.com/","queries":[{"name":"title","type":"css","query":"h1"}]}'
    curl -s http://localhost:$PORT/jobs/status -H "Authorization: Bearer $TOKEN"

    Ctrl-C stops everything.
MSG
# If any process stops, stop the others too, rather than run half a service.
wait -n
echo "==> a process of the service stopped; stopping the others" >&2
exit 1
