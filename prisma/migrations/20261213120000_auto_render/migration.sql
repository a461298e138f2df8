-- Rendering when a page needs it (docs/api.md §23): each URL's log says whether its page was
-- rendered in Chromium, and why.

-- AlterTable
ALTER TABLE "run_urls" ADD COLUMN "rendered" BOOLEAN,
ADD COLUMN "render_reason" TEXT;
