-- The run engine at scale (issue 26). A run keeps the counts of its pending and claimed URLs and
-- the time from which a worker has something to do for it (`due_at`: seed it, claim its URLs, end
-- it), kept by a trigger from the row itself, so that looking for work reads the due runs through
-- an index instead of every running run. `results_count` grows with every stored page, so a run
-- cancelled (paused) on any path counts what it stored. A URL taken over after its worker died is
-- blamed for the death only when that worker was parsing or extracting it alone (contract 16a).

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "pending_urls" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "active_urls" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "due_at" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "run_urls" ADD COLUMN "alone_claim" INTEGER,
ADD COLUMN "blamed" BOOLEAN NOT NULL DEFAULT false;

-- DropIndex
DROP INDEX "runs_status_idx";

-- CreateIndex
CREATE INDEX "runs_status_started_at_idx" ON "runs"("status", "started_at");

-- CreateIndex
CREATE INDEX "runs_status_active_urls_idx" ON "runs"("status", "active_urls");

-- CreateIndex
CREATE INDEX "runs_due_at_idx" ON "runs"("due_at");

-- When a worker has something to do for a running run: at once while it is not seeded or when
-- nothing of it is claimed or claimable (it ends), from its next claim time while it has URLs to
-- claim, never while its URLs are all claimed (an expired claim is found by its lease). Any change
-- of a due run puts it at the back of the due runs: the runs worked on take turns with the others.
CREATE FUNCTION "runs_due_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."due_at" := CASE
    WHEN NEW."status" <> 'running' THEN NULL
    WHEN NOT NEW."seeded" THEN (now() AT TIME ZONE 'UTC')
    WHEN NEW."pending_urls" > 0
         AND NEW."started_urls" < coalesce((NEW."settings"->'crawl'->>'max_pages')::int, 2147483647)
      THEN greatest((now() AT TIME ZONE 'UTC'), NEW."retry_at", NEW."next_claim_at")
    WHEN NEW."active_urls" = 0 THEN (now() AT TIME ZONE 'UTC')
    ELSE NULL
  END;
  RETURN NEW;
END $$;

CREATE TRIGGER "runs_due_at" BEFORE INSERT OR UPDATE ON "runs"
  FOR EACH ROW EXECUTE FUNCTION "runs_due_at"();

-- Running runs: their counts from their URLs, their results from their pages (the trigger sets
-- their due time).
UPDATE "runs" r SET
  "pending_urls" = (SELECT count(*) FROM "run_urls" u WHERE u."run_id" = r."id" AND u."status" = 'pending'),
  "active_urls" = (SELECT count(*) FROM "run_urls" u WHERE u."run_id" = r."id" AND u."status" = 'active'),
  "results_count" = (SELECT coalesce(sum(p."records"), 0) FROM "result_pages" p WHERE p."run_id" = r."id")
WHERE r."status" = 'running';
