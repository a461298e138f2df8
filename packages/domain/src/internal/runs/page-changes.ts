import { unpackDocument } from '@scrapejobs/content';
import type pg from 'pg';

/** A unified diff of two markdown texts (≤ 64 KiB), or null when they are equal; may run off the event loop. */
export type PageDiffer = (before: string, after: string) => Promise<string | null>;

/** How a run's pages compare with its base run's (docs/api.md §17). */
export interface PageCounts {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
}

interface PagePair {
  url: string;
  cseq: number | null;
  bseq: number | null;
  same: boolean;
  /** As PostgreSQL writes a timestamp: stored back as it is. */
  scraped_at: string;
}

/** Documents read at once: each may hold megabytes of markdown. */
const BATCH = 8;

/**
 * Compares each page's markdown with the base run's page of the same URL and stores the pages
 * added, removed or changed after the run's record changes (kind `page`, key `{url}`, a unified
 * diff; an added page's diff adds every line, a removed page's removes them). Pages of equal
 * markdown hashes are unchanged without reading them.
 */
export async function comparePages(
  client: pg.PoolClient,
  runId: string,
  baseRunId: string | null,
  differ: PageDiffer,
): Promise<PageCounts> {
  const side = (run: string) => `
    SELECT DISTINCT ON (d.url) d.url, d.seq, d.markdown_hash, u.fetched_at
      FROM run_documents d JOIN run_urls u ON u.run_id = d.run_id AND u.seq = d.seq
     WHERE d.run_id = ${run} AND d.markdown_hash IS NOT NULL ORDER BY d.url, d.seq`;
  const { rows } = await client.query<PagePair>({
    text: `SELECT coalesce(c.url, b.url) AS url, c.seq AS cseq, b.seq AS bseq,
                  coalesce(c.markdown_hash = b.markdown_hash, false) AS same,
                  coalesce(c.fetched_at, b.fetched_at, now()::timestamp(3))::text AS scraped_at
             FROM (${side('$1')}) c FULL JOIN (${side('$2')}) b ON b.url = c.url
            ORDER BY c.seq NULLS LAST, b.seq`,
    values: [runId, baseRunId],
  });
  const counts: PageCounts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const differing = rows.filter((pair) => !pair.same);
  counts.unchanged = rows.length - differing.length;
  const { rows: next } = await client.query<{ seq: number }>({
    text: 'SELECT coalesce(max(seq) + 1, 0)::int AS seq FROM run_changes WHERE run_id = $1',
    values: [runId],
  });
  let seq = next[0]!.seq;
  for (let at = 0; at < differing.length; at += BATCH) {
    const pairs = differing.slice(at, at + BATCH);
    const current = await markdownOf(
      client,
      runId,
      pairs.map((pair) => pair.cseq),
    );
    const base = await markdownOf(
      client,
      baseRunId,
      pairs.map((pair) => pair.bseq),
    );
    const items: { seq: number; type: string; url: string; diff: string; scrapedAt: string }[] = [];
    for (const pair of pairs) {
      const after = pair.cseq === null ? null : (current.get(pair.cseq) ?? '');
      const before = pair.bseq === null ? null : (base.get(pair.bseq) ?? '');
      const diff = await differ(before ?? '', after ?? '');
      const type = before === null ? 'added' : after === null ? 'removed' : diff === null ? null : 'changed';
      if (type === null) {
        counts.unchanged++;
        continue;
      }
      counts[type]++;
      items.push({ seq: seq++, type, url: pair.url, diff: diff ?? '', scrapedAt: pair.scraped_at });
    }
    await client.query({
      text: `INSERT INTO run_changes (run_id, seq, kind, type, key, changed_fields, diff, scraped_at)
             SELECT $1, i.seq, 'page', i.type::"ChangeType", jsonb_build_object('url', i.url), '{}', i.diff, i.scraped_at
               FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::timestamp(3)[])
                      AS i(seq, type, url, diff, scraped_at)`,
      values: [
        runId,
        items.map((item) => item.seq),
        items.map((item) => item.type),
        items.map((item) => item.url),
        items.map((item) => item.diff),
        items.map((item) => item.scrapedAt),
      ],
    });
  }
  return counts;
}

/** The markdown of a run's documents by seq. */
async function markdownOf(
  client: pg.PoolClient,
  runId: string | null,
  seqs: readonly (number | null)[],
): Promise<Map<number, string>> {
  const wanted = seqs.filter((seq) => seq !== null);
  if (runId === null || wanted.length === 0) return new Map();
  const { rows } = await client.query<{ seq: number; data: Buffer }>({
    text: 'SELECT seq, data FROM run_documents WHERE run_id = $1 AND seq = ANY($2::int[])',
    values: [runId, wanted],
  });
  return new Map(rows.map((row) => [row.seq, unpackDocument(row.data).markdown ?? '']));
}
