-- Retention of runs and their results (docs/api.md §15).

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "retention_days" INTEGER;

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "deleting" BOOLEAN NOT NULL DEFAULT false;
