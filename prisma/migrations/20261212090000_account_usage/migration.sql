-- Pages each account scraped each month (docs/api.md §18, Firecrawl's /team/credit-usage): counted as
-- a run's batches are stored, kept when the runs expire.

-- CreateTable
CREATE TABLE "account_usage" (
    "user_id" TEXT NOT NULL,
    "month" DATE NOT NULL,
    "pages" BIGINT NOT NULL DEFAULT 0,
    "last_page_at" TIMESTAMP(3),

    CONSTRAINT "account_usage_pkey" PRIMARY KEY ("user_id","month")
);

-- AddForeignKey
ALTER TABLE "account_usage" ADD CONSTRAINT "account_usage_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A compatible-API job's kind (scrape, crawl, batch, map, …) and a crawl's options as given, for
-- GET /v2/scrape/{id} and the active crawls' options.

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "firecrawl_kind" TEXT;
ALTER TABLE "jobs" ADD COLUMN "firecrawl_options" JSONB;
