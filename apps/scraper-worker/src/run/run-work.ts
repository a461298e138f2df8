import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ContentOptions, DocumentFormat } from '@scrapejobs/content';
import type { Crawl } from '@scrapejobs/contracts';
import { originOf } from '@scrapejobs/crawl';
import type {
  ClaimedUrl,
  Frontier,
  PreviousFetch,
  RunFailure,
  RunSettings,
  RunState,
  RunStore,
  TrackedPages,
} from '@scrapejobs/domain';
import { fetchSettingsHash, MAX_TAKE_OVERS, seedUrls } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import type { SecretBox } from '@scrapejobs/outbound';
import type {
  DocumentSpec,
  ExtractTask,
  Isolated,
  PageContent,
  PageExtractor,
  UrlFilterSpec,
} from '../extract/extractor.ts';
import type { RequestPace } from '../fetch/index.ts';
import type { HostGate } from '../hosts/index.ts';
import { type ModelStep, modelStep } from '../model/model-step.ts';
import type { JobRateLimiter, Start } from '../rate-limiter.ts';
import { type TrackingStep, trackingStep } from '../tracking/tracking-step.ts';
import { AutoRendering } from './auto-render.ts';
import { BatchWriter } from './batch-writer.ts';
import { Discovery } from './discovery.ts';
import { type LoadedPage, type PageLoaderDeps, type RenderNote, RunFetching } from './page-loader.ts';
import { failed, failureCode, foundUrl, type Processed } from './processed.ts';
import type { RenderLearning } from './render-learning.ts';

/**
 * A claimed URL whose job's next request start (its rate limit) is further away than this goes
 * back to the frontier until then, freeing its place in this worker for other runs.
 */
export const MAX_HOLD_MS = 1_000;
/** 429 and 503 answers a URL is retried after (its host's pause), across claims; the next fails it (§19). */
export const MAX_THROTTLES = 5;
/**
 * The same for robots.txt, which every URL of its origin waits on: after these an origin whose
 * robots.txt keeps answering 503 counts as unreachable (its URLs are skipped, RFC 9309 §2.3.1.3).
 */
const ROBOTS_THROTTLES = 2;
/**
 * Added to a robots.txt Crawl-delay between two starts: what lies between a start and its request
 * reaching the site (a host place, a connection, a busy worker) varies by tens of ms, and the
 * site must see its requests at least the delay apart.
 */
const CRAWL_DELAY_MARGIN_MS = 100;
const FOREVER = Number.MAX_SAFE_INTEGER;

/** What pacing a URL's requests came to: the time waited (not its duration), the 429/503 answers. */
interface Paced {
  waitedMs: number;
  throttled: number;
}

/** What a run reports for metrics: each page's outcome, and each run's end. */
export interface RunObserver {
  page(outcome: string): void;
  run(status: 'success' | 'failed' | 'cancelled', seconds: number): void;
}

export interface WorkDeps extends PageLoaderDeps {
  store: RunStore;
  frontier: Frontier;
  limiter: JobRateLimiter;
  /** Places at target hosts, fleet-wide (§19). */
  hosts: HostGate;
  /** What render_config.mode `auto` learned of each job's hosts, fleet-wide (docs/api.md §23). */
  renderLearning: RenderLearning;
  extractor: PageExtractor;
  /** The operator's language model, null when none is configured (docs/api.md §24). */
  pageModel?: ModelStep['pageModel'];
  /** The scrapes of pages that Firecrawl's changeTracking compares (docs/api.md §24). */
  trackedPages: TrackedPages;
  /** RUN_TIMEOUT_MS: a run that takes longer, from its start, fails with TIMEOUT. */
  runTimeoutMs: number;
  /** robots.txt groups are chosen by this product token (SCRAPER_USER_AGENT before its `/`). */
  robotsToken: string;
  /** Opens the secrets of a job's `request` (WEBHOOK_SECRET_KEY). */
  box: SecretBox;
  log: Logger;
  observer?: RunObserver;
}

/**
 * Why a run's work here stopped: the API cancelled it, this worker shuts down, the run timed out,
 * or it failed for the worker's own reasons (storage, Redis, a bug: `halt`).
 */
export type StopReason = 'cancel' | 'shutdown' | 'timeout' | 'halt';

/** How a run's work here ended once its URLs in flight are done. */
export type WorkEnd = 'idle' | StopReason;

/** A URL's next request start is too far away: it goes back to the frontier until `at`. */
class TooFar extends Error {
  readonly at: number;
  constructor(at: number) {
    super('the next request start is too far away');
    this.at = at;
  }
}

/** A URL lost its lease (another worker took it over): its outcome is not this worker's to write. */
const LOST = 'lost';
/** Logged whenever a worker finds that URLs it held are no longer its own. */
export const LEASE_LOST = 'lost the lease of URLs; other workers took them over or the run ended';

/**
 * The URLs of one run that this worker holds: each fetched (or rendered), extracted and stored
 * in batches with what it found, under the job's rate limit. Any worker may hold URLs of the same
 * run at the same time; the frontier keeps them apart.
 */
export class RunWork {
  readonly runId: string;
  readonly jobId: string;
  readonly userId: string;
  readonly settings: RunSettings;
  readonly #deps: WorkDeps;
  readonly #log: Logger;
  readonly #startedAt: number;
  readonly #batch: BatchWriter;
  readonly #stop = new AbortController();
  readonly #timeout: AbortSignal;
  readonly #held = new Map<number, { url: ClaimedUrl; controller: AbortController }>();
  readonly #filter: UrlFilterSpec | null;
  /** What each page's document keeps; null when the job keeps none. */
  readonly #content: ContentOptions | null;
  readonly #fetching: RunFetching;
  /** Rendering when a page needs it; null unless the job's render_config.mode is `auto`. */
  readonly #auto: AutoRendering | null;
  readonly #discovery: Discovery;
  /** What shapes a page's records, document and links (docs/api.md §20): a page made otherwise is made again. */
  readonly #settingsHash: string;
  /** What the language model does with each page; null when the job asks it nothing. */
  readonly #model: ModelStep | null;
  /** How each page compares with the account's previous scrape of it; null when the job does not ask. */
  readonly #tracking: TrackingStep | null;
  #haltedBy: unknown = null;
  /** The last claim left nothing pending in the run's frontier (set by the dispatcher). */
  drained = true;

  private constructor(deps: WorkDeps, state: RunState, settings: RunSettings) {
    this.#deps = deps;
    this.runId = state.runId;
    this.jobId = state.jobId;
    this.userId = state.userId;
    this.settings = settings;
    this.#startedAt = state.startedAt.getTime();
    this.#log = deps.log.child({ run_id: state.runId, job_id: state.jobId });
    this.#batch = new BatchWriter(deps.store, state.runId, (urls) => this.#log.warn({ urls }, LEASE_LOST));
    this.#timeout = AbortSignal.timeout(Math.max(0, this.#startedAt + deps.runTimeoutMs - Date.now()));
    this.#timeout.addEventListener('abort', () => this.stop('timeout'), { once: true });
    this.#filter = settings.crawl && filterSpec(settings, settings.crawl);
    this.#content = contentOptions(settings);
    this.#fetching = new RunFetching(deps, state.jobId, settings);
    const render = settings.renderConfig;
    this.#auto =
      render?.enabled && render.mode === 'auto'
        ? new AutoRendering(deps.renderLearning, this.#fetching, state.jobId, this.#log)
        : null;
    this.#settingsHash = fetchSettingsHash(settings);
    this.#model = modelStep(settings, deps.pageModel ?? null, deps.extractor);
    this.#tracking = trackingStep(settings.pageTracking, {
      pages: deps.trackedPages,
      extractor: deps.extractor,
      pageModel: deps.pageModel ?? null,
    });
    this.#discovery = new Discovery({
      runId: state.runId,
      jobId: state.jobId,
      userId: state.userId,
      filter: this.#filter,
      frontier: deps.frontier,
      extractor: deps.extractor,
      robotsToken: deps.robotsToken,
      log: this.#log,
      stopped: this.#stop.signal,
      fetch: (url, signal, pace) => this.#fetching.fetch(url, signal, pace),
      robotsPace: (signal) => this.#pace(signal, null, { waitedMs: 0, throttled: 0 }),
      isolated: (url) => this.#isolated(url),
    });
  }

  /** The run's work here, or null when the run is no longer running. */
  static async open(deps: WorkDeps, state: RunState): Promise<RunWork | null> {
    const settings = await deps.store.settings(state.runId);
    return settings && new RunWork(deps, state, settings);
  }

  get inFlight(): number {
    return this.#held.size;
  }

  get stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  /** The URLs held here, in flight or with their outcome not stored yet, for renewing their leases. */
  held(): { runId: string; seq: number; claims: number }[] {
    return [...[...this.#held.values()].map(({ url }) => url), ...this.#batch.unstored()].map((url) => ({
      runId: this.runId,
      seq: url.seq,
      claims: url.claims,
    }));
  }

  /** Stops every URL of the run in flight here; `reason` says what becomes of them. */
  stop(reason: StopReason): void {
    if (!this.stopped) this.#stop.abort(reason);
  }

  /**
   * A URL whose lease under `claims` was lost: its work stops, and writes nothing. False when it
   * is no longer held here under that claim (given back or stored while its lease was renewed).
   */
  lose(seq: number, claims: number): boolean {
    const held = this.#held.get(seq);
    if (held?.url.claims === claims) {
      held.controller.abort(LOST);
      return true;
    }
    return this.#batch.unstored().some((url) => url.seq === seq && url.claims === claims);
  }

  /** Why the run's work here stopped, once nothing is in flight: after a halt, the error. */
  get end(): WorkEnd {
    return this.stopped ? (this.#stop.signal.reason as StopReason) : 'idle';
  }

  get haltedBy(): unknown {
    return this.#haltedBy;
  }

  /** Stores what waits; rejects when storage is unreachable. */
  flush(): Promise<void> {
    return this.#batch.flush();
  }

  /** Closes the run's connections here; the work has nothing in flight. */
  close(): void {
    this.#fetching.close();
  }

  /** Processes a claimed URL to its end; never rejects (a failure of the worker's own halts the run here). */
  async process(url: ClaimedUrl): Promise<void> {
    const controller = new AbortController();
    const signal = AbortSignal.any([this.#stop.signal, controller.signal]);
    this.#held.set(url.seq, { url, controller });
    try {
      await this.#processHeld(url, signal);
    } catch (err) {
      this.#halt(err);
      await this.#release(url, null).catch((releaseErr: Error) => {
        this.#log.warn(
          { url: url.url, err: releaseErr.message },
          'could not give a URL back; another worker takes it when its lease runs out',
        );
      });
    } finally {
      this.#held.delete(url.seq);
    }
  }

  async #processHeld(url: ClaimedUrl, signal: AbortSignal): Promise<void> {
    const paced: Paced = { waitedMs: 0, throttled: 0 };
    const started = performance.now();
    let processed: Processed;
    try {
      processed = await this.#processUrl(url, signal, this.#pace(signal, url, paced));
    } catch (err) {
      const back = { ...url, throttled: url.throttled + paced.throttled };
      if (err instanceof TooFar) return this.#release(back, new Date(err.at));
      if (signal.aborted) {
        const reason = signal.reason as StopReason | typeof LOST;
        if (reason === 'shutdown' || reason === 'halt') await this.#release(back, null);
        return;
      }
      const code = failureCode(err);
      if (code === null) throw err;
      const message = `${url.url}: ${(err as Error).message}`;
      processed = { outcome: failed(code, message, (err as { status?: number }).status ?? null) };
      this.#log.info({ url: url.url, code, err: (err as Error).message }, 'url failed');
    }
    const { outcome, records, found, screenshot, document } = processed;
    const durationMs = Math.max(0, Math.round(performance.now() - started - paced.waitedMs));
    this.#batch.add(
      { ...outcome, seq: url.seq, claims: url.claims, durationMs },
      records && { url: url.url, urlIndex: url.seq, scrapedAt: outcome.fetchedAt ?? new Date(), ...records },
      found,
      screenshot,
      document,
    );
    if (url.kind === 'page') this.#deps.observer?.page(outcome.failure?.code ?? outcome.status);
    // Outside the URL's try: a storage error halts the run here instead of failing the URL. The
    // last URL in flight, with nothing more to claim, goes out at once: nothing else would join
    // its batch soon, and the run (a single page scraped while its caller waits, the end of a
    // crawl, whose next URLs are the links it found) goes on or ends sooner.
    if (this.#batch.due || (this.#held.size === 1 && this.drained)) await this.#batch.flush();
  }

  async #processUrl(url: ClaimedUrl, signal: AbortSignal, pace: RequestPace): Promise<Processed> {
    if (url.crashes > 0) {
      // Its outcome was lost with the worker that saw the death: the URL is not tried again.
      this.#log.warn({ url: url.url }, 'URL failed: its extraction ended its process');
      const message = `${url.url}: its extraction ended the process extracting it; it is not tried again`;
      return { outcome: failed('EXTRACTION_ERROR', message, null) };
    }
    if (url.takeOvers > MAX_TAKE_OVERS) {
      this.#log.warn({ url: url.url, take_overs: url.takeOvers }, 'URL failed: it kept losing its lease');
      const message = `${url.url}: its lease ran out ${url.takeOvers} times (more than ${MAX_TAKE_OVERS}); it is not tried again`;
      return { outcome: failed('TIMEOUT', message, null) };
    }
    if (url.kind === 'robots') return this.#discovery.readRobots(url, signal);
    if (url.kind === 'sitemap') return this.#discovery.readSitemap(url, signal, pace);
    const allowed =
      !this.settings.crawl?.respect_robots_txt || (await this.#discovery.allows(url.url, signal));
    if (typeof allowed === 'object') return { outcome: failed('BLOCKED_TARGET', allowed.blocked, null) };
    if (!allowed) {
      const message = `${url.url}: robots.txt of ${originOf(url.url)} does not allow it`;
      return {
        outcome: { ...failed('ROBOTS_DISALLOWED', message, null), status: 'skipped', fetchedAt: null },
      };
    }
    const previous = this.#previous(url);
    let { page, render, check } = await this.#load(url.url, previous, signal, pace);
    const fetchedAt = new Date();
    // A job that always fetches in full keeps no validators: its pages are not hashed.
    const bodyHash = this.settings.refetch === 'conditional' ? hashOf(page.content) : null;
    // Unchanged since the last successful fetch, with the same settings: its records, document
    // and links are copied from there instead of extracted again (docs/api.md §20).
    if (previous && (page.status === 304 || bodyHash === previous.bodyHash))
      return {
        outcome: {
          status: 'success',
          httpStatus: page.status,
          records: null,
          fetchedAt,
          failure: null,
          unchanged: true,
          render,
        },
      };
    const { crawl } = this.settings;
    const follow = crawl !== null && url.depth < crawl.max_depth;
    let extracted = await this.#extractPage(url, page, follow, signal, check);
    const reason = extracted.renderNeed;
    if (this.#auto && reason) {
      // docs/api.md §23: a page fetched plainly that needs rendering is rendered and read again.
      const plainRecords = extracted.records;
      const rendered = await this.#auto.render(url.url, signal, pace);
      if (rendered) {
        page = rendered;
        extracted = await this.#extractPage(url, page, follow, signal, null);
        render = { rendered: true, reason };
      } else render = { rendered: false, reason: 'render_failed' };
      // A query's miss that rendering did not fix (a field the page lacks) was not the page's need.
      this.#auto.note(url.url, reason !== 'queries_empty' || extracted.records > plainRecords);
    } else if (this.#auto && check) this.#auto.note(url.url, false);
    const screenshot = page.screenshot ?? undefined;
    if (page.screenshotError)
      this.#log.warn({ url: url.url, err: page.screenshotError }, 'screenshot not kept');
    // The language model reads the page after its queries ran (docs/api.md §24).
    const modelled = this.#model && (await this.#model.apply(this.userId, this.runId, extracted, signal));
    if (modelled) extracted = modelled.extraction;
    // After the model step, whose fields the compared document keeps (docs/api.md §24).
    const tracked =
      this.#tracking && (await this.#tracking.apply(this.userId, this.runId, url, extracted, signal));
    if (tracked) extracted = tracked.extraction;
    const warning = joinWarnings(modelled?.warning ?? null, tracked?.warning ?? null);
    const { records, json, links } = extracted;
    return {
      outcome: {
        status: 'success',
        httpStatus: page.status,
        records,
        fetchedAt,
        failure: null,
        ...(warning && { warning }),
        render,
        ...(bodyHash !== null && {
          validators: {
            etag: page.validators?.etag ?? null,
            lastModified: page.validators?.lastModified ?? null,
            bodyHash,
            settingsHash: this.#settingsHash,
            linksFollowed: follow,
          },
        }),
      },
      records: { records, json },
      found: links.map((link) => foundUrl('page', link, url.depth + 1, url.seq)),
      ...(screenshot && { screenshot }),
      ...(extracted.document && {
        document: { seq: url.seq, url: url.url, statusCode: page.status, ...extracted.document },
      }),
    };
  }

  /**
   * The page as the job gets it: rendered, fetched, or with `auto` as its host's pages have needed
   * (then `check` says how the plain page is checked), and what its URL log says of rendering.
   */
  async #load(url: string, previous: PreviousFetch | null, signal: AbortSignal, pace: RequestPace) {
    if (this.#auto) return this.#auto.load(url, signal, pace);
    const load = await this.#fetching.pageLoader();
    const renders = this.settings.renderConfig?.enabled === true;
    const conditional = previous && !renders && this.#fetching.sendsValidators();
    const page = await load(url, signal, pace, conditional ? previous : undefined);
    const render: RenderNote = { rendered: renders, reason: renders ? 'always' : null };
    return { page, render, check: null };
  }

  /** The page's records, links, document and model input, and with `check`, whether it needs rendering. */
  async #extractPage(
    url: ClaimedUrl,
    page: LoadedPage,
    follow: boolean,
    signal: AbortSignal,
    check: ExtractTask['renderCheck'] | null,
  ) {
    const { crawl } = this.settings;
    const document = this.#documentSpec(url.url, page);
    const task: ExtractTask = {
      key: this.runId,
      queries: this.settings.queries,
      page: page.content,
      ...(follow &&
        crawl &&
        this.#filter && { links: { follow: crawl.follow, baseUrl: page.url, filter: this.#filter } }),
      ...(document && { document }),
      ...(check && { renderCheck: check }),
    };
    if (this.#model) task.model = this.#model.input(this.#pageInfo(url.url, page), this.#content);
    return this.#deps.extractor.extract(this.userId, task, signal, this.#isolated(url));
  }

  /** The page's last successful fetch, when the job may copy from it: made with the same settings. */
  #previous(url: ClaimedUrl): PreviousFetch | null {
    return url.previous?.settingsHash === this.#settingsHash ? url.previous : null;
  }

  /** What the page's document keeps, or null when the job keeps no document (docs/api.md §17). */
  #documentSpec(sourceUrl: string, page: LoadedPage): DocumentSpec | null {
    if (!this.#content) return null;
    const returns = page.scriptReturns && { javascriptReturns: page.scriptReturns };
    return { ...this.#content, ...this.#pageInfo(sourceUrl, page), ...returns };
  }

  #pageInfo(sourceUrl: string, page: LoadedPage) {
    return {
      sourceUrl,
      url: page.url,
      statusCode: page.status,
      contentType: 'body' in page.content ? (page.content.contentType ?? null) : 'text/html',
    };
  }

  /**
   * A URL taken over after its lease ran out is parsed, extracted and converted in a child process
   * of this worker (docs/api.md §16.2). A death of that process is the page's: it is noted in the
   * frontier before the URL fails, so that it is not tried again even if this worker dies too.
   */
  #isolated(url: ClaimedUrl): Isolated | undefined {
    if (url.takeOvers === 0) return undefined;
    return {
      died: async (why) => {
        this.#log.warn({ url: url.url, why }, 'the process extracting a taken-over URL died of it');
        await this.#deps.frontier.crashed(this.runId, url).catch((err: Error) => {
          this.#log.warn({ url: url.url, err: err.message }, 'could not note the death of its process');
        });
      },
    };
  }

  /**
   * Paces the requests of `url` (of robots.txt when null): each waits for the job's next start
   * (§8), the Crawl-delay of the target's robots.txt for a crawl, and a place at the target's host
   * (§19). A URL whose wait would be longer than a hold is given back until then (TooFar): waiting
   * holds no place here. `paced` counts the time waited and the 429/503 answers.
   */
  #pace(signal: AbortSignal, url: ClaimedUrl | null, paced: Paced): RequestPace {
    const maxWaitMs = url ? MAX_HOLD_MS : FOREVER;
    return {
      throttleRetries: url ? Math.max(0, MAX_THROTTLES - url.throttled) : ROBOTS_THROTTLES,
      beforeAttempt: async (target) => {
        const before = performance.now();
        const starts: Start[] = [];
        try {
          starts.push(await this.#nextStart(this.jobId, this.settings.rateLimit, signal, maxWaitMs));
          const delayMs = this.settings.crawl?.respect_robots_txt
            ? this.#discovery.crawlDelayMs(target.origin)
            : 0;
          if (delayMs > 0)
            starts.push(
              await this.#nextStart(
                `${this.runId}@${target.host}`,
                60_000 / (delayMs + CRAWL_DELAY_MARGIN_MS),
                signal,
                maxWaitMs,
              ),
            );
          const place = await this.#deps.hosts.acquire(hostOf(target), this.userId, signal, maxWaitMs);
          if ('retryAt' in place) throw new TooFar(place.retryAt);
          return (answer) => {
            if (answer.status === 429 || answer.status === 503) paced.throttled++;
            place.release(answer).catch((err: Error) => {
              this.#log.warn(
                { host: target.host, err: err.message },
                'could not give a host place back; it comes back when its lease runs out',
              );
            });
          };
        } catch (err) {
          // The request does not start (its host had no place in time, the run stopped): the
          // starts it took go back, or a slow job's URL would wait a whole interval for nothing.
          await Promise.all(starts.map((start) => start.giveBack().catch(() => {})));
          throw err;
        } finally {
          paced.waitedMs += performance.now() - before;
        }
      },
    };
  }

  /** Waits for the next start of `key`'s budget, or gives the URL back when it is too far away. */
  async #nextStart(key: string, perMinute: number, signal: AbortSignal, maxWaitMs: number): Promise<Start> {
    const start = await this.#deps.limiter.acquire(key, perMinute, signal, maxWaitMs);
    if (typeof start === 'number') throw new TooFar(start);
    return start;
  }

  /** Gives a URL back to the frontier, unprocessed. */
  async #release(url: ClaimedUrl, notBefore: Date | null): Promise<void> {
    const lost = await this.#deps.frontier.release(this.runId, [url], notBefore);
    if (lost > 0) this.#log.warn({ urls: lost }, LEASE_LOST);
  }

  #halt(err: unknown): void {
    if (this.stopped && this.end !== 'halt') return;
    if (!this.#haltedBy) {
      this.#haltedBy = err;
      this.#log.error(
        { err: (err as Error).message },
        'run stopped here: the worker could not go on with it',
      );
    }
    this.stop('halt');
  }

  /** How long the run has been going, for its duration metric. */
  get seconds(): number {
    return (Date.now() - this.#startedAt) / 1000;
  }

  /** The failure a run ends with after the worker's own errors (RUN_MAX_ATTEMPTS in a row). */
  static gaveUp(attempts: number, err: unknown): RunFailure {
    return {
      code: 'EXTRACTION_ERROR',
      message: `The run could not go on after ${attempts} attempts: ${(err as Error)?.message ?? err}`,
    };
  }
}

/** The warnings of a page's steps as one: the first one's code, every message. */
function joinWarnings(...warnings: (RunFailure | null)[]): RunFailure | null {
  const given = warnings.filter((w) => w !== null);
  if (given.length === 0) return null;
  return { code: given[0]!.code, message: given.map((w) => w.message).join('; ') };
}

/** Hex SHA-256 of a page as it arrived: the body fetched, or the DOM rendered. */
function hashOf(content: PageContent): string {
  return createHash('sha256')
    .update('body' in content ? content.body : content.html)
    .digest('hex');
}

/** A target's host as its places are counted: host and port, the default port spelled out. */
function hostOf(target: URL): string {
  return `${target.hostname}:${target.port || (target.protocol === 'https:' ? '443' : '80')}`;
}

/** The formats and content of the run's documents (docs/api.md §17), or null when it keeps none. */
function contentOptions({ formats, content, trackContent }: RunSettings): ContentOptions | null {
  const kept = formats.filter((f): f is DocumentFormat => f !== 'screenshot' && f !== 'summary');
  // Change tracking of pages compares their markdown, kept even when not asked for.
  if (trackContent && !kept.includes('markdown')) kept.push('markdown');
  // A summary lives in the document, however few formats it has besides.
  if (kept.length === 0 && !formats.includes('summary')) return null;
  return {
    formats: kept,
    onlyMainContent: content?.only_main_content ?? true,
    includeTags: content?.include_tags ?? [],
    excludeTags: content?.exclude_tags ?? [],
  };
}

/** A crawl's filter: same origin as one of its seeds, include and exclude. */
function filterSpec(settings: RunSettings, crawl: Crawl): UrlFilterSpec {
  return {
    seedOrigins: [...new Set(seedUrls(settings).map(originOf))],
    sameOrigin: crawl.same_origin,
    include: crawl.include,
    exclude: crawl.exclude,
  };
}
