-- Unchanged pages are not fetched in full or extracted again (docs/api.md §20): per job and page URL,
-- the validators and body hash of its last successful fetch, the hash of the settings that shaped
-- its records and document, where those are stored (the copy source) and the links it gave.

-- CreateEnum
CREATE TYPE "RefetchMode" AS ENUM ('conditional', 'always');

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "refetch" "RefetchMode" NOT NULL DEFAULT 'conditional';

-- AlterTable: a page stored as a copy of its last successful run's.
ALTER TABLE "run_urls" ADD COLUMN "unchanged" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "page_validators" (
    "job_id" TEXT NOT NULL,
    "url_key" BYTEA NOT NULL,
    "etag" TEXT,
    "last_modified" TEXT,
    "body_hash" BYTEA NOT NULL,
    "settings_hash" BYTEA NOT NULL,
    "source_run_id" TEXT NOT NULL,
    "source_seq" INTEGER NOT NULL,
    "links" TEXT[],

    CONSTRAINT "page_validators_pkey" PRIMARY KEY ("job_id","url_key")
);

-- AddForeignKey
ALTER TABLE "page_validators" ADD CONSTRAINT "page_validators_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
