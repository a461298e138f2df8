-- Firecrawl's changeTracking format (docs/api.md §24): a job's tracking options, and each tracked
-- page's scrape, which the account's next scrape of the same URL and tag compares with.

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "page_tracking" JSONB;

-- CreateTable
CREATE TABLE "tracked_pages" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "user_id" TEXT NOT NULL,
    "mode" "Mode" NOT NULL,
    "key" BYTEA NOT NULL,
    "scraped_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tracked_pages_pkey" PRIMARY KEY ("run_id","seq")
);

-- CreateIndex
CREATE INDEX "tracked_pages_user_id_mode_key_scraped_at_idx" ON "tracked_pages"("user_id", "mode", "key", "scraped_at" DESC);

-- AddForeignKey
ALTER TABLE "tracked_pages" ADD CONSTRAINT "tracked_pages_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
