-- The job's settings when a run started, so that a change of the job applies from its next run.
ALTER TABLE "runs" ADD COLUMN "settings" JSONB;
