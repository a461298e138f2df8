-- Every page as content: markdown, clean HTML, links and metadata, PDFs included (docs/api.md §17).

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "formats" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "jobs" ADD COLUMN "content" JSONB;

-- CreateEnum
CREATE TYPE "ChangeKind" AS ENUM ('record', 'page');

-- AlterTable: a page's change (change_tracking.content) is its URL and a diff of its markdown.
ALTER TABLE "run_changes" ADD COLUMN "kind" "ChangeKind" NOT NULL DEFAULT 'record';
ALTER TABLE "run_changes" ADD COLUMN "diff" TEXT;

-- CreateTable
CREATE TABLE "run_documents" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "status_code" SMALLINT,
    "bytes" INTEGER NOT NULL,
    "markdown_hash" BYTEA,
    "data" BYTEA NOT NULL,

    CONSTRAINT "run_documents_pkey" PRIMARY KEY ("run_id","seq")
);

-- A document is compressed by the worker (zstd): stored as it is, out of line.
ALTER TABLE "run_documents" ALTER COLUMN "data" SET STORAGE EXTERNAL;

-- AddForeignKey
ALTER TABLE "run_documents" ADD CONSTRAINT "run_documents_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
