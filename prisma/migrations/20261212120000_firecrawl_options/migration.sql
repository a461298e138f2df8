-- The Firecrawl request's own options that a job's fields do not hold (docs/api.md §26): the
-- formats and actions its answers show, and the key under which a later scrape may reuse its page.

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "firecrawl" JSONB;
