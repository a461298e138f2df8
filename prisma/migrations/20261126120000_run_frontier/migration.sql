-- The frontier: a run's URLs, one row each, claimed by any worker under a lease (docs/api.md §11).

-- CreateEnum
CREATE TYPE "UrlStatus" AS ENUM ('pending', 'active', 'success', 'failed', 'skipped');

-- CreateEnum
CREATE TYPE "UrlKind" AS ENUM ('page', 'robots', 'sitemap');

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "crawl" JSONB;

-- AlterTable
ALTER TABLE "runs" DROP COLUMN "done_urls",
ADD COLUMN "skipped_urls" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "seeded" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "next_seq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "started_urls" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "retry_at" TIMESTAMP(3),
ADD COLUMN "next_claim_at" TIMESTAMP(3);

-- A run under way when this applies is seeded again by a worker and starts over: its counts
-- start from zero, and pages it already stored keep their records once (same URL indexes).
UPDATE "runs" SET "successful_urls" = 0, "failed_urls" = 0, "first_failure" = NULL WHERE "status" = 'running';
UPDATE "runs" SET "seeded" = true WHERE "status" <> 'running';

-- CreateTable
CREATE TABLE "run_urls" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "kind" "UrlKind" NOT NULL DEFAULT 'page',
    "url" TEXT NOT NULL,
    "url_key" BYTEA NOT NULL,
    "depth" SMALLINT NOT NULL DEFAULT 0,
    "parent_seq" INTEGER,
    "status" "UrlStatus" NOT NULL DEFAULT 'pending',
    "claims" INTEGER NOT NULL DEFAULT 0,
    "crashes" SMALLINT NOT NULL DEFAULT 0,
    "lease_until" TIMESTAMP(3),
    "http_status" SMALLINT,
    "records" INTEGER,
    "duration_ms" INTEGER,
    "fetched_at" TIMESTAMP(3),
    "error_code" TEXT,
    "error_message" TEXT,

    CONSTRAINT "run_urls_pkey" PRIMARY KEY ("run_id","seq")
);

-- CreateTable
CREATE TABLE "run_robots" (
    "run_id" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "rules" JSONB,
    "lease_until" TIMESTAMP(3),

    CONSTRAINT "run_robots_pkey" PRIMARY KEY ("run_id","origin")
);

-- CreateIndex
CREATE INDEX "runs_status_idx" ON "runs"("status");

-- CreateIndex
CREATE INDEX "run_urls_run_id_status_seq_idx" ON "run_urls"("run_id", "status", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "run_urls_run_id_url_key_key" ON "run_urls"("run_id", "url_key");

-- AddForeignKey
ALTER TABLE "run_urls" ADD CONSTRAINT "run_urls_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_robots" ADD CONSTRAINT "run_robots_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
