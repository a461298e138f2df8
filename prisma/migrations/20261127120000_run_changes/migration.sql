-- What changed between runs, and extraction health (docs/api.md §13).

-- CreateEnum
CREATE TYPE "ChangeType" AS ENUM ('added', 'removed', 'changed');

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "change_tracking" JSONB;

-- AlterTable: runs that ended before this applies are not analysed.
ALTER TABLE "runs" ADD COLUMN "analysis_due" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "base_run_id" TEXT,
ADD COLUMN "changes" JSONB,
ADD COLUMN "health" JSONB,
ADD COLUMN "query_matches" JSONB;

-- CreateTable
CREATE TABLE "run_changes" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" "ChangeType" NOT NULL,
    "key" JSONB NOT NULL,
    "data" JSONB,
    "previous" JSONB,
    "changed_fields" TEXT[],
    "scraped_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "run_changes_pkey" PRIMARY KEY ("run_id","seq")
);

-- CreateIndex
CREATE INDEX "runs_analysis_due_idx" ON "runs"("analysis_due");

-- CreateIndex
CREATE INDEX "run_changes_run_id_type_seq_idx" ON "run_changes"("run_id", "type", "seq");

-- AddForeignKey
ALTER TABLE "run_changes" ADD CONSTRAINT "run_changes_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
