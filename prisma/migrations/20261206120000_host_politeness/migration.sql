-- Politeness toward target hosts (docs/api.md §19): how often a URL was answered 429 or 503 and
-- given back to wait for its host, across claims; at the sixth such answer it fails.

-- AlterTable
ALTER TABLE "run_urls" ADD COLUMN "throttled" SMALLINT NOT NULL DEFAULT 0;
