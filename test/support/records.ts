// Records written straight into the database as a scraper worker stores them, and read back.
import { type Database, newRecordIdBase } from '@scrapejobs/db';

export interface SeedRecord {
  url: string;
  data: Record<string, string | null>;
  scrapedAt?: Date;
}

/** Stores each record as a page of its own (URL index `from` + i), as a scraper worker stores a page. */
export async function insertResults(db: Database, runId: string, records: SeedRecord[], from = 0) {
  await db.resultPage.createMany({
    data: records.map((r, i) => ({
      runId,
      url: r.url,
      urlIndex: from + i,
      scrapedAt: r.scrapedAt ?? new Date(Date.UTC(2026, 0, 2, 3, 4, 5, i % 1000)),
      records: 1,
      idBase: newRecordIdBase(),
      data: [r.data],
    })),
  });
}

/** A record as the view `results` lists it. */
export interface StoredRecord {
  seq: bigint;
  id: string;
  url: string;
  urlIndex: number;
  rowIndex: number;
  data: Record<string, unknown>;
  scrapedAt: Date;
}

/** A run's records by URL and row (the view `results`; `seq` is the order they were stored in). */
export function storedRecords(db: Database, runId: string): Promise<StoredRecord[]> {
  return db.$queryRaw<StoredRecord[]>`
    SELECT seq, id, url, url_index AS "urlIndex", row_index AS "rowIndex", data, scraped_at AS "scrapedAt"
      FROM results WHERE run_id = ${runId} ORDER BY url_index, row_index, seq`;
}

/** How many records a run has stored. */
export async function recordCount(db: Database, runId: string): Promise<number> {
  const { _sum } = await db.resultPage.aggregate({ where: { runId }, _sum: { records: true } });
  return _sum.records ?? 0;
}

/** Stores one page of records (a page's records share its URL and time); returns its id_base. */
export async function insertPage(
  db: Database,
  runId: string,
  page: { url: string; urlIndex: number; records: Record<string, string | null>[]; ids?: string[] },
): Promise<string> {
  const idBase = newRecordIdBase();
  await db.resultPage.create({
    data: {
      runId,
      url: page.url,
      urlIndex: page.urlIndex,
      scrapedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, page.urlIndex)),
      records: page.records.length,
      idBase,
      ids: page.ids ?? [],
      data: page.records,
    },
  });
  return idBase;
}
