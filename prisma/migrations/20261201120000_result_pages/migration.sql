-- Results are stored a page to a row (issue 17): the page's URL, time, ids and run are kept once
-- instead of once per record, and its records are one JSON array that PostgreSQL compresses.
-- 347 → about 16 bytes per record (bench/README.md). Existing records keep their ids (`ids`);
-- new pages derive them from `id_base`. Result cursors given out before it name a record's old
-- sequence number and are refused (400 at `cursor`): a client starts that listing again. The
-- migration rewrites the whole results table while it holds it: plan the upgrade of a big one.

-- CreateTable
CREATE TABLE "result_pages" (
    "run_id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "url_index" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "scraped_at" TIMESTAMP(3) NOT NULL,
    "records" INTEGER NOT NULL,
    "id_base" TEXT NOT NULL,
    "ids" TEXT[],
    "data" JSONB NOT NULL,

    CONSTRAINT "result_pages_pkey" PRIMARY KEY ("run_id","seq")
);

-- lz4 compresses a page as small as pglz does, with less CPU; a server built without it keeps pglz.
DO $$
BEGIN
  ALTER TABLE "result_pages" ALTER COLUMN "data" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN NULL;
END $$;

-- AddForeignKey
ALTER TABLE "result_pages" ADD CONSTRAINT "result_pages_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A page's records were inserted together, so their seq values were consecutive: the page keeps
-- the first, and pages keep their order.
INSERT INTO "result_pages" ("run_id", "seq", "url_index", "url", "scraped_at", "records", "id_base", "ids", "data")
SELECT "run_id", min("seq"), "url_index", min("url"), min("scraped_at"), count(*)::int, substr(min("id"), 5, 23),
       array_agg("id" ORDER BY "row_index"), jsonb_agg("data" ORDER BY "row_index")
  FROM "results"
 GROUP BY "run_id", "url_index";

SELECT setval(pg_get_serial_sequence('result_pages', 'seq'), coalesce((SELECT max("seq") FROM "results"), 0) + 1, false);

-- DropTable
DROP TABLE "results";

-- The records one per row, as the results table had them, for reading with SQL (the change
-- analysis reads them so). `seq` orders them within a run.
CREATE VIEW "results" AS
SELECT p."run_id",
       p."seq" * 16384 + (e.ord - 1) AS "seq",
       coalesce(p."ids"[e.ord], 'res_' || p."id_base"
         || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((e.ord - 1) >> 10) & 31)::int + 1, 1)
         || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((e.ord - 1) >> 5) & 31)::int + 1, 1)
         || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((e.ord - 1) & 31)::int + 1, 1)) AS "id",
       p."url",
       p."url_index",
       (e.ord - 1)::int AS "row_index",
       e.data AS "data",
       p."scraped_at"
  FROM "result_pages" p
 CROSS JOIN LATERAL jsonb_array_elements(p."data") WITH ORDINALITY AS e(data, ord);
