import { newRecordIdBase } from '@scrapejobs/db';
import type { PoolClient } from 'pg';
import { wallTime } from './frontier.ts';

/**
 * What a page's successful fetch tells its job's next run (docs/api.md §20): its validators, the
 * hash of its body and of the settings its records and document were made with, and whether its
 * links were followed (the `found` entries of its seq in the same batch are then all its links).
 */
export interface FetchValidators {
  etag: string | null;
  lastModified: string | null;
  /** Hex SHA-256 of the body (or of the rendered DOM). */
  bodyHash: string;
  /** fetchSettingsHash of the run's settings. */
  settingsHash: string;
  linksFollowed: boolean;
}

/** An unchanged page stored as a copy of its copy source: the run and seq holding its latest records. */
export interface PageCopy {
  seq: number;
  sourceRunId: string;
  sourceSeq: number;
  /** The source's records: the outcome counts them. */
  records: number;
  /** Its stored links are accepted again as found on it (a crawl, below max_depth). */
  follow: boolean;
}

/** What becomes of the unchanged outcomes of a batch whose URLs are still theirs to store. */
interface UnchangedPlan {
  copies: PageCopy[];
  /** Outcomes that cannot be copied: their URLs go back to the frontier for a full fetch. */
  back: { seq: number; claims: number }[];
}

interface PlanRow {
  seq: number;
  claims: number;
  source_run_id: string | null;
  source_seq: number | null;
  links_known: boolean | null;
  follow: boolean;
  records: number;
}

/**
 * Decides for each unchanged outcome whose URL is still active under its claim whether it can be
 * copied: its job's validators point at a run that still exists (not being deleted by retention),
 * with the links it gave when the URL needs them (a crawl, below max_depth). Until the batch
 * commits, the validators are locked for share (a job update cannot forget them) and the source
 * run for key share: retention, which marks runs FOR UPDATE SKIP LOCKED, passes it over, while its
 * analysis (FOR NO KEY UPDATE) goes on. Outcomes whose claim was lost are in neither list.
 */
export async function planUnchanged(
  client: PoolClient,
  runId: string,
  outcomes: readonly { seq: number; claims: number }[],
): Promise<UnchangedPlan> {
  const { rows } = await client.query<PlanRow>({
    name: 'runs-unchanged-plan',
    text: `WITH mine AS MATERIALIZED (
             SELECT u.seq, u.claims, u.url_key, u.depth FROM unnest($2::int[], $3::int[]) AS o(seq, claims)
               JOIN run_urls u ON u.run_id = $1 AND u.seq = o.seq AND u.claims = o.claims
                              AND u.status = 'active' AND u.kind = 'page'),
           src AS MATERIALIZED (
             SELECT v.url_key, v.source_run_id, v.source_seq, v.links IS NOT NULL AS links_known
               FROM runs r
               JOIN page_validators v ON v.job_id = r.job_id
               JOIN runs s ON s.id = v.source_run_id AND NOT s.deleting
              WHERE r.id = $1 AND v.url_key IN (SELECT url_key FROM mine)
                FOR SHARE OF v FOR KEY SHARE OF s)
           SELECT m.seq, m.claims, src.source_run_id, src.source_seq, src.links_known,
                  m.depth < coalesce((r.settings->'crawl'->>'max_depth')::int, -1) AS follow,
                  (SELECT coalesce(sum(p.records), 0)::int FROM result_pages p
                    WHERE p.run_id = src.source_run_id AND p.url_index = src.source_seq) AS records
             FROM mine m LEFT JOIN src ON src.url_key = m.url_key
             JOIN runs r ON r.id = $1`,
    values: [runId, outcomes.map((o) => o.seq), outcomes.map((o) => o.claims)],
  });
  const plan: UnchangedPlan = { copies: [], back: [] };
  for (const row of rows) {
    if (row.source_run_id === null || row.source_seq === null || (row.follow && !row.links_known))
      plan.back.push({ seq: row.seq, claims: row.claims });
    else
      plan.copies.push({
        seq: row.seq,
        sourceRunId: row.source_run_id,
        sourceSeq: row.source_seq,
        records: row.records,
        follow: row.follow,
      });
  }
  return plan;
}

/**
 * Gives back to the frontier the URLs of unchanged outcomes that cannot be copied, with their
 * share of `max_pages`, and forgets their validators: the next claim of each gets no previous
 * fetch, so its worker fetches and extracts it in full.
 */
export async function giveBackUnchanged(
  client: PoolClient,
  runId: string,
  urls: readonly { seq: number; claims: number }[],
): Promise<void> {
  await client.query({
    name: 'runs-unchanged-back',
    text: `WITH back AS (
             UPDATE run_urls u SET status = 'pending', lease_until = NULL
               FROM unnest($2::int[], $3::int[]) AS h(seq, claims)
              WHERE u.run_id = $1 AND u.seq = h.seq AND u.claims = h.claims AND u.status = 'active'
              RETURNING u.kind, u.url_key),
           forgotten AS (
             DELETE FROM page_validators v USING runs r
              WHERE r.id = $1 AND v.job_id = r.job_id AND v.url_key IN (SELECT url_key FROM back))
         UPDATE runs SET started_urls = started_urls - (SELECT count(*) FROM back WHERE kind = 'page'),
                         pending_urls = pending_urls + (SELECT count(*) FROM back),
                         active_urls = active_urls - (SELECT count(*) FROM back)
          WHERE id = $1`,
    values: [runId, urls.map((u) => u.seq), urls.map((u) => u.claims)],
  });
}

/** The pages copied by a batch, as the columns of the batch statement (RunStore). */
interface CopyColumns {
  seqs: number[];
  sourceRunIds: string[];
  sourceSeqs: number[];
  idBases: string[];
  follow: boolean[];
  scrapedAt: string | null;
}

/** The copies as the batch statement takes them: new records get an id base and the time of the copy. */
export function copyColumns(copies: readonly PageCopy[]): CopyColumns {
  const now = new Date();
  return {
    seqs: copies.map((c) => c.seq),
    sourceRunIds: copies.map((c) => c.sourceRunId),
    sourceSeqs: copies.map((c) => c.sourceSeq),
    idBases: copies.map(() => newRecordIdBase(now.getTime())),
    follow: copies.map((c) => c.follow),
    scrapedAt: wallTime(now),
  };
}

/** A hex digest as bytes for a bytea column; null when absent. */
export const hexBytes = (hex: string | undefined) => (hex === undefined ? null : Buffer.from(hex, 'hex'));

/** An unchanged page this batch stored, with what its fetch said this time when the worker told it. */
interface StoredCopy extends PageCopy {
  validators: FetchValidators | null;
}

/**
 * Completes the unchanged pages this batch stored (each by this transaction): copies of their
 * documents and screenshots, made inside PostgreSQL from their copy sources, and their validators
 * pointed at this run (with the validators of this fetch when the worker gave them), so that the
 * next run copies from here.
 */
export async function completeCopies(
  client: PoolClient,
  runId: string,
  copies: readonly StoredCopy[],
): Promise<void> {
  await client.query({
    name: 'runs-unchanged-complete',
    text: `WITH c AS (
             SELECT * FROM unnest($2::int[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bytea[], $8::bytea[])
               AS c(seq, source_run_id, source_seq, etag, last_modified, body_hash, settings_hash)),
           documents AS (
             INSERT INTO run_documents (run_id, seq, url, status_code, bytes, markdown_hash, data)
             SELECT $1, c.seq, d.url, d.status_code, d.bytes, d.markdown_hash, d.data
               FROM c JOIN run_documents d ON d.run_id = c.source_run_id AND d.seq = c.source_seq
             ON CONFLICT (run_id, seq) DO NOTHING),
           screenshots AS (
             INSERT INTO run_screenshots (run_id, seq, png)
             SELECT $1, c.seq, s.png FROM c JOIN run_screenshots s ON s.run_id = c.source_run_id AND s.seq = c.source_seq
             ON CONFLICT (run_id, seq) DO NOTHING)
         UPDATE page_validators v
            SET source_run_id = $1, source_seq = c.seq,
                etag = CASE WHEN c.body_hash IS NULL THEN v.etag ELSE c.etag END,
                last_modified = CASE WHEN c.body_hash IS NULL THEN v.last_modified ELSE c.last_modified END,
                body_hash = coalesce(c.body_hash, v.body_hash),
                settings_hash = coalesce(c.settings_hash, v.settings_hash)
           FROM c, runs r, run_urls u
          WHERE r.id = $1 AND u.run_id = $1 AND u.seq = c.seq AND v.job_id = r.job_id AND v.url_key = u.url_key`,
    values: [
      runId,
      copies.map((c) => c.seq),
      copies.map((c) => c.sourceRunId),
      copies.map((c) => c.sourceSeq),
      copies.map((c) => c.validators?.etag ?? null),
      copies.map((c) => c.validators?.lastModified ?? null),
      copies.map((c) => hexBytes(c.validators?.bodyHash)),
      copies.map((c) => hexBytes(c.validators?.settingsHash)),
    ],
  });
}
