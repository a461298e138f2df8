-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "done_urls" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
ADD COLUMN     "first_failure" JSONB;
