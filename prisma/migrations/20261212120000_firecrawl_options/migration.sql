-- The Firecrawl request's own options that a job's fields do not hold (docs/api.md §26): the
-- formats and actions its answers show, and the key under which a later scrape may reuse its page.

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "firecrawl" JSONB,
ADD COLUMN "firecrawl_cache_key" TEXT;

-- CreateIndex
CREATE INDEX "jobs_user_id_mode_firecrawl_cache_key_idx" ON "jobs"("user_id", "mode", "firecrawl_cache_key");
