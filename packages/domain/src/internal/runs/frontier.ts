import { normalizeUrl, originOf, urlKey } from '@scrapejobs/crawl';
import { type Database, transaction } from '@scrapejobs/db';
import { expandGlob } from '@scrapejobs/extraction';
import { RUN_SETTINGS, type RunSettings, runSettings } from './settings.ts';

/** The glob limit of docs/api.md §3.4: a run's expanded source. */
const MAX_SOURCE_URLS = 1000;

/** Now in UTC wall time, as Prisma writes `timestamp(3)` columns. */
export const NOW = `(now() AT TIME ZONE 'UTC')`;
/** A time for a `timestamp(3)` column, which holds UTC wall time as Prisma writes it. */
export const wallTime = (d: Date | null) => d?.toISOString().replace('Z', '') ?? null;
/** A `timestamp(3)` column (UTC wall time) as epoch milliseconds, whatever the process's time zone. */
const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;
const ms = (param: string) => `make_interval(secs => ${param}::double precision / 1000)`;
/** A crawl's `max_pages`; a run without a crawl fetches its whole expanded source. */
export const MAX_PAGES = `coalesce((r.settings->'crawl'->>'max_pages')::int, 2147483647)`;

/** A run's seeds: its expanded source, normalised, each once, in order. */
export function seedUrls({ source, urls: listed }: Pick<RunSettings, 'source' | 'urls'>): string[] {
  const expanded = listed ? { ok: true as const, urls: listed } : expandGlob(source, MAX_SOURCE_URLS);
  const urls = (expanded.ok ? expanded.urls : [source]).map((raw) => normalizeUrl(raw) ?? raw);
  return [...new Set(urls)];
}

export type UrlKindName = 'page' | 'robots' | 'sitemap';

/** A URL of a run claimed by a worker; `claims` fences every later write of its outcome. */
export interface ClaimedUrl {
  seq: number;
  kind: UrlKindName;
  url: string;
  depth: number;
  claims: number;
  /**
   * How often its lease ran out and a worker took it over: for a death, a stall or a lost
   * connection alike, none of which is proof against it. Such a URL is extracted in a child
   * process (docs/api.md §16.2); past MAX_TAKE_OVERS it fails with TIMEOUT.
   */
  takeOvers: number;
  /** Deaths of the child process extracting it that its living worker saw: after one it fails (§16.2). */
  crashes: number;
  /** Answers 429 or 503 it got in earlier claims (§19). */
  throttled: number;
  /**
   * What the job's last successful fetch of this page gave (docs/api.md §20), for a conditional
   * request and to tell an unchanged page: null unless the run's job has `refetch: conditional`,
   * the page was fetched before and the run holding its latest records still exists.
   */
  previous: PreviousFetch | null;
}

/** The validators, body hash and settings hash of a page's last successful fetch (docs/api.md §20). */
export interface PreviousFetch {
  etag: string | null;
  lastModified: string | null;
  /** Hex SHA-256 of the body. */
  bodyHash: string;
  /** fetchSettingsHash of the settings its records and document were made with. */
  settingsHash: string;
}

/** A running run as the workers see it when they look for work. */
export interface RunState {
  runId: string;
  jobId: string;
  userId: string;
  seeded: boolean;
  startedAt: Date;
  /** Pending URLs within the run's `max_pages`. */
  claimable: boolean;
  /** How many URLs a claim could get now (0 before the run is seeded). */
  pending: number;
  /** A claimed URL whose worker stopped renewing its lease. */
  expired: boolean;
  /** Claimed URLs, expired ones included. */
  active: boolean;
  /** No worker claims before this: a backoff after a failed attempt, or the job's next request start. */
  notBefore: Date | null;
  /** The job's `rate_limit` (requests per minute) the run runs with. */
  rateLimit: number;
}

interface StateRow {
  id: string;
  job_id: string;
  user_id: string;
  seeded: boolean;
  started_at: number;
  claimable: boolean;
  pending: number;
  expired: boolean;
  active: boolean;
  not_before: number | null;
  rate_limit: number;
}

/** The claimed page's PreviousFetch, from its job's validators whose copy source is still there. */
const PREVIOUS = `(SELECT jsonb_build_object('etag', v.etag, 'lastModified', v.last_modified,
                                             'bodyHash', encode(v.body_hash, 'hex'),
                                             'settingsHash', encode(v.settings_hash, 'hex'))
                     FROM runs o
                     JOIN page_validators v ON v.job_id = o.job_id AND v.url_key = u.url_key
                     JOIN runs s ON s.id = v.source_run_id AND NOT s.deleting
                    WHERE o.id = u.run_id AND u.kind = 'page'
                      AND coalesce(o.settings->>'refetch', 'conditional') = 'conditional') AS previous`;
const RETURNING_CLAIMED = `u.seq, u.kind, u.url, u.depth, u.claims, u.take_overs AS "takeOvers", u.crashes,
                           u.throttled, ${PREVIOUS}`;
/** A URL taken over more often than this fails with TIMEOUT (docs/api.md §16.2). */
export const MAX_TAKE_OVERS = 20;
/** The run `r` holds a URL whose lease ran out. */
const EXPIRED = `EXISTS (SELECT 1 FROM run_urls u WHERE u.run_id = r.id AND u.status = 'active'
                                 AND u.lease_until < ${NOW})`;

/**
 * The frontier of every run (docs/api.md §11): its URLs in PostgreSQL, each accepted once, which
 * any worker of the fleet claims in batches under a lease it renews while it works. A URL whose
 * lease ran out (its worker died or was held up) is taken over; the `claims` count of the row
 * fences every write of a holder that lost it, so a page is stored once whoever fetched it.
 */
export class Frontier {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Running runs a worker could do something for, at most `limit` of each kind, the longest due
   * first: those due within `horizonMs` (to seed, to claim URLs of, to end), those holding a URL
   * whose lease ran out, and those past `timeoutMs` from their start. Each kind is read through an
   * index, so the cost does not grow with the number of running runs.
   */
  async states(limit: number, horizonMs: number, timeoutMs: number): Promise<RunState[]> {
    const { rows } = await this.#db.pool.query<StateRow>({
      name: 'frontier-states',
      text: `WITH picked AS (
               SELECT id, min(at) AS at FROM (
                 (SELECT r.id, r.due_at AS at FROM runs r
                   WHERE r.due_at <= ${NOW} + ${ms('$2')} ORDER BY r.due_at LIMIT $1)
                 UNION ALL
                 (SELECT r.id, r.started_at FROM runs r
                   WHERE r.status = 'running' AND r.active_urls > 0 AND ${EXPIRED} LIMIT $1)
                 UNION ALL
                 (SELECT r.id, r.started_at FROM runs r
                   WHERE r.status = 'running' AND r.started_at < ${NOW} - ${ms('$3')} LIMIT $1)) AS t
               GROUP BY id)
             SELECT r.id, r.job_id, j.user_id, r.seeded, ${epochMs('r.started_at')} AS started_at,
                    r.pending_urls > 0 AND r.started_urls < ${MAX_PAGES} AS claimable,
                    r.pending_urls AS pending,
                    r.active_urls > 0 AND ${EXPIRED} AS expired,
                    r.active_urls > 0 AS active,
                    ${epochMs('greatest(r.retry_at, r.next_claim_at)')} AS not_before,
                    coalesce((r.settings->>'rate_limit')::float8, j.rate_limit) AS rate_limit
               FROM picked p JOIN runs r ON r.id = p.id JOIN jobs j ON j.id = r.job_id
              WHERE r.status = 'running'
              ORDER BY p.at`,
      values: [limit, horizonMs, timeoutMs],
    });
    return rows.map((row) => ({
      runId: row.id,
      jobId: row.job_id,
      userId: row.user_id,
      seeded: row.seeded,
      startedAt: new Date(row.started_at),
      claimable: row.claimable,
      pending: row.pending,
      expired: row.expired,
      active: row.active,
      notBefore: row.not_before === null ? null : new Date(row.not_before),
      rateLimit: row.rate_limit,
    }));
  }

  /**
   * No worker claims URLs of the run for `delayMs`: its user had no free place, or its job's next
   * request start is that far away. It goes behind the other due runs meanwhile.
   */
  async postpone(runId: string, delayMs: number): Promise<void> {
    await this.#db.pool.query({
      name: 'frontier-postpone',
      text: `UPDATE runs SET next_claim_at = greatest(next_claim_at, ${NOW} + ${ms('$2')})
              WHERE id = $1 AND status = 'running'`,
      values: [runId, delayMs],
    });
  }

  /**
   * Accepts a running run's expanded source (and, for a crawl reading sitemaps, the robots.txt of
   * each seed origin, for its Sitemap lines) into its frontier, once: a URL that normalises like
   * an earlier one is the same URL.
   */
  async seed(runId: string): Promise<void> {
    await transaction(this.#db.pool, async (client) => {
      const { rows: locked } = await client.query<{ settings: unknown }>({
        name: 'frontier-seed-lock',
        text: `SELECT ${RUN_SETTINGS} AS settings FROM runs r JOIN jobs j ON j.id = r.job_id
                WHERE r.id = $1 AND r.status = 'running' AND NOT r.seeded FOR UPDATE OF r`,
        values: [runId],
      });
      if (!locked[0]) return;
      const settings = runSettings(locked[0].settings);
      const urls = seedUrls(settings);
      const rows: { kind: UrlKindName; url: string }[] = urls.map((url) => ({ kind: 'page', url }));
      if (settings.crawl?.sitemap)
        for (const origin of new Set(urls.map(originOf)))
          rows.push({ kind: 'robots', url: `${origin}/robots.txt` });
      await client.query({
        name: 'frontier-seed',
        text: `WITH seeded AS (
                 INSERT INTO run_urls (run_id, seq, kind, url, url_key)
                 SELECT $1, t.seq - 1, t.kind, t.url, t.url_key
                   FROM unnest($2::"UrlKind"[], $3::text[], $4::bytea[]) WITH ORDINALITY AS t(kind, url, url_key, seq))
               UPDATE runs SET seeded = true, total_urls = $5, next_seq = $6, pending_urls = $6 WHERE id = $1`,
        values: [
          runId,
          rows.map((r) => r.kind),
          rows.map((r) => r.url),
          rows.map((r) => urlKey(r.kind, r.url)),
          urls.length,
          rows.length,
        ],
      });
    });
  }

  /**
   * Claims up to `count` pending URLs of a running run, in the order accepted, for `leaseMs`;
   * pages only within the run's `max_pages`. One statement that locks the run's row first, so
   * that workers claiming at once take turns: together they never claim a URL twice nor pass
   * `max_pages`.
   */
  async claim(runId: string, count: number, leaseMs: number): Promise<ClaimedUrl[]> {
    const { rows } = await this.#db.pool.query<ClaimedUrl>({
      name: 'frontier-claim',
      text: `WITH r AS MATERIALIZED (
               SELECT r.id, greatest(${MAX_PAGES} - r.started_urls, 0) AS room
                 FROM runs r WHERE r.id = $1 AND r.status = 'running' AND r.seeded FOR UPDATE),
             -- Its rows are locked (after the run's, which the subquery on r takes first) and read
             -- again as they are now: a URL another worker claimed while this one waited for the
             -- run is passed over for the next pending one. Materialised, and the update joins on
             -- the primary key: with stale statistics the planner otherwise walks every pending row
             -- once per row to claim.
             next AS MATERIALIZED (
               SELECT c.seq, c.kind, count(*) FILTER (WHERE c.kind = 'page') OVER (ORDER BY c.seq) AS nth
                 FROM (SELECT u.seq, u.kind FROM run_urls u
                        WHERE u.run_id = (SELECT id FROM r) AND u.status = 'pending'
                        ORDER BY u.seq LIMIT $2 FOR UPDATE) c),
             claimed AS (
               UPDATE run_urls u SET status = 'active', claims = u.claims + 1, lease_until = ${NOW} + ${ms('$3')}
                 FROM next, r
                WHERE (u.run_id, u.seq) = ($1, next.seq) AND (next.kind <> 'page' OR next.nth <= r.room)
                RETURNING ${RETURNING_CLAIMED}),
             counted AS (
               UPDATE runs SET started_urls = started_urls + (SELECT count(*) FROM claimed WHERE kind = 'page'),
                               pending_urls = pending_urls - (SELECT count(*) FROM claimed),
                               active_urls = active_urls + (SELECT count(*) FROM claimed)
                WHERE id = (SELECT id FROM r))
           SELECT * FROM claimed ORDER BY seq`,
      values: [runId, count, leaseMs],
    });
    return rows;
  }

  /**
   * Takes over the first URL of a running run whose lease ran out: its worker died, was held up or
   * lost its connections. A take-over is no proof against the URL: it is only counted (§16.2).
   */
  async takeOver(runId: string, leaseMs: number): Promise<ClaimedUrl | null> {
    const { rows } = await this.#db.pool.query<ClaimedUrl>({
      name: 'frontier-take-over',
      // The run's row is locked first, as claims take it: workers taking over URLs of one run
      // take turns, and one whose lost URL another took meanwhile finds the next one or none.
      text: `WITH r AS MATERIALIZED (SELECT id FROM runs WHERE id = $1 AND status = 'running' FOR UPDATE),
             lost AS MATERIALIZED (
               SELECT u.seq FROM run_urls u
                WHERE u.run_id = (SELECT id FROM r) AND u.status = 'active' AND u.lease_until < ${NOW}
                ORDER BY u.seq LIMIT 1 FOR UPDATE)
           UPDATE run_urls u SET claims = u.claims + 1, take_overs = least(u.take_overs + 1, 32767),
                                 lease_until = ${NOW} + ${ms('$2')}
             FROM lost
            WHERE (u.run_id, u.seq) = ($1, lost.seq)
        RETURNING ${RETURNING_CLAIMED}`,
      values: [runId, leaseMs],
    });
    return rows[0] ?? null;
  }

  /**
   * The child process extracting a URL under this claim died, and its worker saw it (§16.2): the
   * URL is not processed again, even when its outcome is lost with that worker.
   */
  async crashed(runId: string, url: { seq: number; claims: number }): Promise<void> {
    await this.#db.pool.query({
      name: 'frontier-crashed',
      text: `UPDATE run_urls SET crashes = least(crashes + 1, 32767)
              WHERE run_id = $1 AND seq = $2 AND claims = $3 AND status = 'active'`,
      values: [runId, url.seq, url.claims],
    });
  }

  /** Extends the leases of URLs still held; returns those that were lost (taken over or ended meanwhile). */
  async renew(
    held: readonly { runId: string; seq: number; claims: number }[],
    leaseMs: number,
  ): Promise<{ runId: string; seq: number; claims: number }[]> {
    if (held.length === 0) return [];
    const { rows } = await this.#db.pool.query<{ run_id: string; seq: number }>({
      name: 'frontier-renew',
      // The runs' rows are locked first (in one order, shared with other renewals), as claims,
      // take-overs, stored batches, releases and ends lock them before their URLs: the other way
      // round, a renewal and a batch being stored could deadlock.
      text: `WITH r AS MATERIALIZED (SELECT id FROM runs WHERE id = ANY($1::text[]) ORDER BY id FOR KEY SHARE)
             UPDATE run_urls u SET lease_until = ${NOW} + ${ms('$4')}
               FROM unnest($1::text[], $2::int[], $3::int[]) AS h(run_id, seq, claims)
              WHERE u.run_id = ANY(ARRAY(SELECT id FROM r)) AND u.run_id = h.run_id AND u.seq = h.seq
                AND u.claims = h.claims AND u.status = 'active'
              RETURNING u.run_id, u.seq`,
      values: [held.map((h) => h.runId), held.map((h) => h.seq), held.map((h) => h.claims), leaseMs],
    });
    const renewed = new Set(rows.map((row) => `${row.run_id} ${row.seq}`));
    return held.filter((h) => !renewed.has(`${h.runId} ${h.seq}`));
  }

  /**
   * Gives claimed URLs back to the frontier unprocessed (this worker stops, or the job's next
   * request start or a place at the URL's host is too far away), with the pages' share of
   * `max_pages` and the 429/503 answers each got (`throttled`, when given); no worker claims the
   * run's URLs before `notBefore` when given. Returns how many were no longer this claim's.
   */
  async release(
    runId: string,
    urls: readonly { seq: number; claims: number; throttled?: number }[],
    notBefore: Date | null = null,
  ): Promise<number> {
    const { rows } = await this.#db.pool.query<{ released: number }>({
      name: 'frontier-release',
      // The run's row is locked first, as claims and stored batches lock it: the other way round, a
      // release, a batch being stored and a renewal of leases could deadlock.
      text: `WITH r AS MATERIALIZED (SELECT id FROM runs WHERE id = $1 FOR UPDATE),
           back AS (
               UPDATE run_urls u SET status = 'pending', lease_until = NULL,
                                     throttled = coalesce(h.throttled, u.throttled)
                 FROM unnest($2::int[], $3::int[], $5::int[]) AS h(seq, claims, throttled)
                WHERE u.run_id = (SELECT id FROM r) AND u.seq = h.seq AND u.claims = h.claims
                  AND u.status = 'active'
                RETURNING u.kind)
           UPDATE runs SET started_urls = started_urls - (SELECT count(*) FROM back WHERE kind = 'page'),
                           pending_urls = pending_urls + (SELECT count(*) FROM back),
                           active_urls = active_urls - (SELECT count(*) FROM back),
                           next_claim_at = coalesce($4::timestamp(3), next_claim_at)
            WHERE id = $1
            RETURNING (SELECT count(*) FROM back)::int AS released`,
      values: [
        runId,
        urls.map((u) => u.seq),
        urls.map((u) => u.claims),
        wallTime(notBefore),
        urls.map((u) => u.throttled ?? null),
      ],
    });
    return urls.length - (rows[0]?.released ?? 0);
  }

  /**
   * Counts a failed attempt at a run for the workers' own reasons (storage, Redis, a bug): no
   * worker claims its URLs for `retryDelayMs`, doubling with each attempt in a row. Returns the
   * attempts so far, or null when another worker already counted this failure (the run is in
   * its backoff) or the run is no longer running.
   */
  async failedAttempt(runId: string, retryDelayMs: number): Promise<number | null> {
    const { rows } = await this.#db.pool.query<{ attempts: number }>({
      name: 'frontier-failed-attempt',
      text: `UPDATE runs SET attempts = attempts + 1,
                             retry_at = ${NOW} + ${ms('$2')} * power(2, least(attempts, 16))
              WHERE id = $1 AND status = 'running' AND (retry_at IS NULL OR retry_at <= ${NOW})
              RETURNING attempts`,
      values: [runId, retryDelayMs],
    });
    return rows[0]?.attempts ?? null;
  }

  /**
   * The robots.txt rules of an origin for a run, read once per run by whichever worker needs them
   * first: `fetch` when this caller must fetch them (and then `saveRobots`), `wait` while another
   * worker does, else the rules saved.
   */
  async robots(
    runId: string,
    origin: string,
    leaseMs: number,
  ): Promise<'fetch' | 'wait' | { rules: unknown }> {
    const { rows } = await this.#db.pool.query<{ rules: unknown; mine: boolean }>({
      name: 'frontier-robots',
      text: `WITH mine AS (
               INSERT INTO run_robots AS b (run_id, origin, lease_until) VALUES ($1, $2, ${NOW} + ${ms('$3')})
               ON CONFLICT (run_id, origin) DO UPDATE SET lease_until = excluded.lease_until
                WHERE b.rules IS NULL AND b.lease_until < ${NOW}
               RETURNING 1)
           SELECT (SELECT rules FROM run_robots WHERE run_id = $1 AND origin = $2) AS rules,
                  EXISTS (SELECT 1 FROM mine) AS mine`,
      values: [runId, origin, leaseMs],
    });
    const row = rows[0]!;
    if (row.mine) return 'fetch';
    return row.rules === null ? 'wait' : { rules: row.rules };
  }

  async saveRobots(runId: string, origin: string, rules: unknown): Promise<void> {
    await this.#db.pool.query({
      name: 'frontier-save-robots',
      text: 'UPDATE run_robots SET rules = $3, lease_until = NULL WHERE run_id = $1 AND origin = $2',
      values: [runId, origin, JSON.stringify(rules)],
    });
  }
}
