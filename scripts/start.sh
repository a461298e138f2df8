#!/usr/bin/env bash
# Starts the whole service on this machine: migrations, a test API key, the API and the workers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

export DATABASE_URL="${DATABASE_URL:-postgresql://root@127.0.0.1:5432/scrapejobs}"
export PORT="${PORT:-3000}"
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://localhost:$PORT}"
export ALLOW_PRIVATE_NETWORK_TARGETS="${ALLOW_PRIVATE_NETWORK_TARGETS:-true}"

echo "==> applying migrations"
pnpm exec node apps/api/src/cli/migrate.ts
TOKEN=$(pnpm exec node apps/api/src/cli/keys.ts create --user "${DEMO_USER:-demo@example.com}" --name quickstart | tail -n 1)

pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
# A smaller young generation keeps streamed downloads under 256 MB (bench/README.md).
API_NODE_FLAGS=(--max-semi-space-size=8 --max-old-space-size=384)
pnpm exec node "${API_NODE_FLAGS[@]}" apps/api/src/main.ts &
pids+=($!)
# The same sizing keeps the scraper worker under 300 MB in bench/fleet.ts (bench/README.md).
SCRAPER_NODE_FLAGS=(--max-semi-space-size=8 --max-old-space-size=384)
pnpm exec node "${SCRAPER_NODE_FLAGS[@]}" apps/scraper-worker/src/main.ts &
pids+=($!)
pnpm exec node apps/webhook-worker/src/main.ts &
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
wait
