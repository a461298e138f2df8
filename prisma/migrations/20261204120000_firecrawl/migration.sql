-- The Firecrawl-compatible API (docs/api.md §18): its jobs are ordinary jobs, marked and expiring.

-- CreateEnum
CREATE TYPE "JobOrigin" AS ENUM ('api', 'firecrawl');

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "origin" "JobOrigin" NOT NULL DEFAULT 'api';
ALTER TABLE "jobs" ADD COLUMN "urls" JSONB;
ALTER TABLE "jobs" ADD COLUMN "expires_at" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "jobs_expires_at_idx" ON "jobs"("expires_at");

-- The job list shows one origin at a time: its indexes lead with it.
DROP INDEX "jobs_user_id_mode_id_idx";
DROP INDEX "jobs_user_id_mode_status_id_idx";
CREATE INDEX "jobs_user_id_mode_origin_id_idx" ON "jobs"("user_id", "mode", "origin", "id" DESC);
CREATE INDEX "jobs_user_id_mode_origin_status_id_idx" ON "jobs"("user_id", "mode", "origin", "status", "id" DESC);
