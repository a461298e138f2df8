-- A URL is blamed only on proof (docs/api.md §16.2): take-overs are counted apart from the deaths
-- of a URL's extraction process, and the alone mark of §16a is gone.

-- AlterTable
ALTER TABLE "run_urls" DROP COLUMN "alone_claim",
DROP COLUMN "blamed",
ADD COLUMN     "take_overs" SMALLINT NOT NULL DEFAULT 0;
