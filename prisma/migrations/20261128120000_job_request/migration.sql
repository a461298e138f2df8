-- Pages behind headers, cookies, logins and clicks; screenshots of what was rendered (docs/api.md §14).

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "request" JSONB;

-- CreateTable
CREATE TABLE "run_screenshots" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "png" BYTEA NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_screenshots_pkey" PRIMARY KEY ("run_id","seq")
);

-- A PNG is compressed already: stored as it is, out of line.
ALTER TABLE "run_screenshots" ALTER COLUMN "png" SET STORAGE EXTERNAL;

-- AddForeignKey
ALTER TABLE "run_screenshots" ADD CONSTRAINT "run_screenshots_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
