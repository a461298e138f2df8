-- Results keep one index instead of four (issue 17): nothing looks a record up by its public id;
-- a page's records are written once, under its URL's claim (issue 14), so (run, page, row) needs
-- no unique index; and the primary key is (run_id, seq), the order keyset paging reads, instead of
-- seq alone beside a (run_id, seq) index. 478 → 347 bytes per record (bench/README.md). On a large
-- table the new primary key is built while the migration holds the table: plan the upgrade.

-- DropIndex
DROP INDEX "results_id_key";

-- DropIndex
DROP INDEX "results_run_id_url_index_row_index_key";

-- DropIndex
DROP INDEX "results_run_id_seq_idx";

-- AlterTable
ALTER TABLE "results" DROP CONSTRAINT "results_pkey",
ADD CONSTRAINT "results_pkey" PRIMARY KEY ("run_id", "seq");
