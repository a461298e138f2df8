#!/usr/bin/env bash
# The whole test suite: lint and format check, type-check, the import rules (scripts/check-imports.ts),
# then every test against the real PostgreSQL and Redis of this machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

echo "==> lint and format check"
pnpm exec biome ci .
echo "==> type-check"
pnpm exec tsc -p tsconfig.json --noEmit
echo "==> imports: no cycles, no app importing another app's files"
pnpm exec node scripts/check-imports.ts
echo "==> tests"
pnpm exec node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js --ci "$@"
