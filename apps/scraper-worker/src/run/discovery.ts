import { setTimeout as sleep } from 'node:timers/promises';
import { normalizeUrl, originOf, parseRobots, type RobotsRules, robotsAllows } from '@scrapejobs/crawl';
import type { ClaimedUrl, Frontier } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import type { Isolated, PageExtractor, SitemapUrls, UrlFilterSpec } from '../extract/extractor.ts';
import { FetchError, type FetchedPage, type RequestPace } from '../fetch/index.ts';
import { failureCode, foundUrl, type Processed, succeeded } from './processed.ts';

/** How long a worker fetching an origin's robots.txt for a run holds it before another may. */
const ROBOTS_LEASE_MS = 30_000;
const ROBOTS_POLL_MS = 200;
/** robots.txt is read up to this size (RFC 9309 asks for at least 500 KiB). */
const ROBOTS_MAX_BYTES = 512 * 1024;
/** Sitemap indexes are followed this deep (an index of indexes), no deeper. */
const MAX_SITEMAP_DEPTH = 2;

/**
 * robots.txt of an origin as a run keeps it: its rules; unreachable (its URLs are skipped); or
 * refused by outbound safety (docs/api.md §7), whose reason its URLs fail with.
 */
type StoredRobots = RobotsRules | { unreachable: true } | { blocked: string };
const ALLOW_ALL = parseRobots('', '*');

/** What a run's discovery needs of its work here. */
export interface DiscoveryContext {
  runId: string;
  jobId: string;
  userId: string;
  /** A crawl's filter (sitemaps are read for crawls only). */
  filter: UrlFilterSpec | null;
  frontier: Frontier;
  extractor: PageExtractor;
  /** robots.txt groups are chosen by this product token. */
  robotsToken: string;
  log: Logger;
  /** The run's work here stops: a shared robots.txt read stops with it, not with one URL. */
  stopped: AbortSignal;
  fetch(url: string, signal: AbortSignal, pace: RequestPace): Promise<FetchedPage>;
  /** How robots.txt is fetched: in its turn of the job's rate limit and the host's places, however long that takes. */
  robotsPace(signal: AbortSignal): RequestPace;
  isolated(url: ClaimedUrl): Isolated | undefined;
}

/**
 * What a run finds beside its pages (docs/api.md §11): the robots.txt rules of each origin, read
 * once per run by one worker of the fleet and shared through the frontier, and the seed origins'
 * sitemaps, whose pages join the run.
 */
export class Discovery {
  readonly #ctx: DiscoveryContext;
  readonly #robots = new Map<string, Promise<StoredRobots>>();
  /** The Crawl-delay of each origin whose robots.txt was read, for pacing (§19). */
  readonly #delays = new Map<string, number>();

  constructor(ctx: DiscoveryContext) {
    this.#ctx = ctx;
  }

  /**
   * Whether the robots.txt of the URL's origin lets the service fetch it (an unreachable one lets
   * nothing), or why outbound safety refused the origin when its robots.txt was fetched.
   */
  async allows(url: string, signal: AbortSignal): Promise<boolean | { blocked: string }> {
    const robots = await this.#robotsOf(originOf(url), signal);
    if ('blocked' in robots) return robots;
    return !('unreachable' in robots) && robotsAllows(robots, url);
  }

  /** The `Crawl-delay` of the origin's robots.txt for this run, once read here (0 when none or not yet). */
  crawlDelayMs(origin: string): number {
    return this.#delays.get(origin) ?? 0;
  }

  /** A seed origin's robots.txt, for its Sitemap lines (else /sitemap.xml). */
  async readRobots(url: ClaimedUrl, signal: AbortSignal): Promise<Processed> {
    const origin = originOf(url.url);
    const robots = await this.#robotsOf(origin, signal);
    if ('blocked' in robots) return { outcome: succeeded(null), found: [] };
    const listed = 'unreachable' in robots ? [] : robots.sitemaps;
    const sitemaps = listed.length > 0 ? listed : [`${origin}/sitemap.xml`];
    return {
      outcome: succeeded(null),
      found: sitemaps.flatMap((sitemap) => {
        const normalised = normalizeUrl(sitemap);
        return normalised ? [foundUrl('sitemap', normalised, 0, url.seq)] : [];
      }),
    };
  }

  /** A sitemap or sitemap index: its pages join the run at depth 0, filtered like links; its sitemaps are read in turn. */
  async readSitemap(url: ClaimedUrl, signal: AbortSignal, pace: RequestPace): Promise<Processed> {
    const ctx = this.#ctx;
    let read: SitemapUrls;
    let page: FetchedPage;
    try {
      page = await ctx.fetch(url.url, signal, pace);
      const task = { key: ctx.runId, body: page.body, filter: ctx.filter! };
      read = await ctx.extractor.readSitemap(ctx.userId, task, signal, ctx.isolated(url));
    } catch (err) {
      if (!signal.aborted && failureCode(err) !== null)
        ctx.log.info({ url: url.url, err: (err as Error).message }, 'sitemap not read');
      throw err;
    }
    const found =
      read.kind === 'urlset'
        ? read.urls.map((link) => foundUrl('page', link, 0, url.seq))
        : url.depth + 1 < MAX_SITEMAP_DEPTH
          ? read.urls.map((sitemap) => foundUrl('sitemap', sitemap, url.depth + 1, url.seq))
          : [];
    ctx.log.info({ url: url.url, urls: found.length }, 'sitemap read');
    return { outcome: succeeded(page.status), found };
  }

  /**
   * An origin's robots.txt for this run. The read belongs to the run's work here, not to the URL
   * that started it: a URL that loses its lease or stops stops waiting, the others still get the rules.
   */
  #robotsOf(origin: string, signal: AbortSignal): Promise<StoredRobots> {
    let robots = this.#robots.get(origin);
    if (!robots) {
      robots = this.#loadRobots(origin, this.#ctx.stopped);
      this.#robots.set(origin, robots);
      robots
        .then((read) => 'rules' in read && this.#delays.set(origin, read.crawlDelayMs ?? 0))
        .catch(() => {});
      robots.catch(() => this.#robots.delete(origin));
    }
    return untilAborted(robots, signal);
  }

  async #loadRobots(origin: string, signal: AbortSignal): Promise<StoredRobots> {
    const { frontier, runId } = this.#ctx;
    for (;;) {
      const got = await frontier.robots(runId, origin, ROBOTS_LEASE_MS);
      if (typeof got === 'object') return got.rules as StoredRobots;
      if (got === 'wait') {
        await sleep(ROBOTS_POLL_MS, undefined, { signal });
        continue;
      }
      const robots = await this.#fetchRobots(origin, signal);
      await frontier.saveRobots(runId, origin, robots);
      return robots;
    }
  }

  /** RFC 9309 §2.3.1: a 4xx robots.txt allows everything; an unreachable one or a 5xx, nothing. */
  async #fetchRobots(origin: string, signal: AbortSignal): Promise<StoredRobots> {
    const ctx = this.#ctx;
    // One request per origin and run: it waits for its turn rather than holding other URLs of the
    // origin back by a lease.
    try {
      const page = await ctx.fetch(`${origin}/robots.txt`, signal, ctx.robotsPace(signal));
      return parseRobots(page.body.subarray(0, ROBOTS_MAX_BYTES).toString('utf8'), ctx.robotsToken);
    } catch (err) {
      if (signal.aborted || !(err instanceof FetchError)) throw err;
      if (err.code === 'BLOCKED_TARGET') return { blocked: err.message };
      if (err.status !== undefined && err.status >= 400 && err.status < 500) return ALLOW_ALL;
      ctx.log.info(
        { origin, err: err.message },
        'robots.txt unreachable: the URLs of its origin are skipped',
      );
      return { unreachable: true };
    }
  }
}

/** `promise`, or the signal's reason once it aborts first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
