import type { ProxyEntry } from '@scrapejobs/config';
import { type CreateJobInput, SECRET_MASK } from '@scrapejobs/contracts';
import {
  ACCEPTED_BEYOND_MAX_PAGES,
  AppError,
  type CompatRun,
  type CompatService,
  type JobWebhook,
  type Principal,
} from '@scrapejobs/domain';
import {
  batchScrapeJob,
  type ChangeTrackingOptions,
  cacheKeyOf,
  crawlErrorsBody,
  crawlJob,
  crawlStatus,
  errorBody,
  extractJob,
  type FirecrawlDocument,
  type FirecrawlJobOptions,
  type FirecrawlVersion,
  firecrawlDocument,
  firecrawlFormats,
  interactBody,
  jobOptions,
  type MapLink,
  mapBody,
  mapJob,
  mergeExtracted,
  type Parsed,
  parseBatchScrapeRequest,
  parseCrawlRequest,
  parseExtractRequest,
  parseInteractRequest,
  parseMapRequest,
  parseScrapeRequest,
  parseSearchRequest,
  rankLinks,
  readJobOptions,
  type ScrapeOptions,
  type SearchHit,
  scrapeFailure,
  scrapeJob,
  searchBody,
  searchScrapeJob,
  UNSUPPORTED_ENDPOINTS,
  unsupportedMessage,
  type Webhook,
} from '@scrapejobs/firecrawl';
import { NO_MODEL_MESSAGE, type TokenLedger } from '@scrapejobs/llm';
import type { Logger } from '@scrapejobs/logging';
import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import { principalOf, requireScope } from '../http/auth.ts';
import { jsonBody } from '../http/body.ts';
import { toAppError } from '../http/error-handler.ts';
import { runSearch, type SearchDeps } from '../search/search.ts';
import type { InteractService } from './interact.ts';
import { type ParseDeps, parseRoute } from './parse.ts';
import { type TeamDeps, teamRoutes } from './team.ts';
import type { StatusReader, WatchedKind } from './watch.ts';

export interface FirecrawlDeps extends TeamDeps {
  /** The operator's proxies (PROXY_URLS): `location.country` picks one. */
  proxies: readonly ProxyEntry[];
  compat: CompatService;
  interact: InteractService;
  /** Checks a job body as POST /jobs does (selectors, proxies), with this service's field paths. */
  parseJob: (raw: unknown, userId: string) => Promise<CreateJobInput>;
  /** Resolves the API key and counts the request against the rate limit, as for the native API. */
  auth: readonly RequestHandler[];
  publicBaseUrl: string;
  log: Logger;
  /** Whether the operator named a language model (docs/api.md §24). */
  model: boolean;
  /** Each account's model tokens today, for /team/token-usage. */
  tokens: TokenLedger;
  search: SearchDeps['client'];
  /** POST /v2/parse's conversion threads and file size limit. */
  parse: Pick<ParseDeps, 'files' | 'maxBytes'>;
}

/** Records of an extraction read to merge its answer (its pages are at most EXTRACT_MAX_PAGES). */
const EXTRACT_RECORDS = 1000;

/** Documents a status answer holds at most (Firecrawl's page size). */
const STATUS_PAGE = 100;
/** URLs read for a map's answer at most. */
const MAP_URLS_READ = 100_000;

type Handler = (req: Request, version: FirecrawlVersion, principal: Principal) => Promise<[number, unknown]>;

/**
 * The Firecrawl-compatible API (docs/api.md §18) under `/v1` and `/v2`: every call becomes a job
 * of origin `firecrawl` and its run, so the fleet, isolation, retention and the console apply.
 * Errors answer in Firecrawl's shape, `{success: false, error}` (with `details` on a 400).
 */
export function firecrawlRouter(deps: FirecrawlDeps): Router & { status: StatusReader } {
  const router = Router();
  const { compat } = deps;
  const base = deps.publicBaseUrl.replace(/\/+$/, '');
  const version = (req: Request): FirecrawlVersion => (req.baseUrl.endsWith('/v1') ? 'v1' : 'v2');

  const route = (method: 'get' | 'post' | 'delete', path: string, handler: Handler) => {
    const scope = method === 'get' ? 'jobs:read' : 'jobs:write';
    router[method](
      path,
      ...deps.auth,
      requireScope(scope),
      ...(method === 'post' ? [jsonBody] : []),
      async (req: Request, res: Response) => {
        const [status, body] = await handler(req, version(req), principalOf(req));
        res.status(status).json(body);
      },
    );
  };

  /** A job body checked as POST /jobs checks it, then started (with its webhook, if any). */
  const start = async (
    principal: Principal,
    job: CreateJobInput,
    urls: string[] | null = null,
    webhook: JobWebhook | null = null,
    tracking: ChangeTrackingOptions | null = null,
    options: FirecrawlJobOptions | null = null,
    cacheKey: string | null = null,
  ) => {
    const parsed = await deps.parseJob(job, principal.userId);
    return compat.start(principal, parsed, urls, webhook, tracking, options, cacheKey);
  };

  /** A crawl's or batch's parsed webhook, with where a 400 about its URL points. */
  const jobWebhook = (req: Request, webhook: Webhook | null, prefix: JobWebhook['prefix']) =>
    webhook && {
      webhook,
      prefix,
      field: typeof (req.body as { webhook?: unknown }).webhook === 'string' ? 'webhook' : 'webhook.url',
    };

  const idOf = (req: Request) => String(req.params.id);

  /** Formats that need the language model, without one: a 400 at each (docs/api.md §24). */
  const needModel = (options: ScrapeOptions, prefix = '') => {
    if (deps.model || options.modelFormatsAt.length === 0) return;
    const paths = options.modelFormatsAt.map((at) => `${prefix}formats[${at}]`);
    const details = Object.fromEntries(paths.map((path) => [path, NO_MODEL_MESSAGE]));
    throw new AppError(400, `The request is invalid: ${paths[0]}: ${NO_MODEL_MESSAGE}.`, { details });
  };

  /**
   * `location.country` without any of the operator's proxies is served without one, with a
   * warning (languages are still sent); a country no proxy has is a 400 at `at`.
   */
  const located = <T extends ScrapeOptions>(options: T, at: string): T => {
    const { country } = options.fetch;
    if (country === null) return options;
    if (deps.proxies.length === 0)
      return {
        ...options,
        fetch: { ...options.fetch, country: null },
        warnings: [
          ...options.warnings,
          `location.country ${country} is served without a proxy: the operator has configured none (languages are still sent)`,
        ],
      };
    if (deps.proxies.some((proxy) => proxy.country === country)) return options;
    const message = `no proxy is configured for country ${country}`;
    throw new AppError(400, `The request is invalid: ${at}: ${message}.`, { details: { [at]: message } });
  };
  const warningOf = (warnings: readonly string[]) => (warnings.length > 0 ? warnings.join('; ') : undefined);

  route('post', '/scrape', async (req, v, principal) => {
    const request = located(valid(parseScrapeRequest(req.body, v)), 'location.country');
    needModel(request);
    const { job, timeoutMs } = scrapeJob(request);
    // A tracked scrape compares with the previous one: it is always fetched (docs/api.md §24).
    const key = request.changeTracking ? null : cacheKeyOf(request.url, job, request);
    const cached =
      key && request.cache.maxAge > 0 && (await fromCache(principal, key, request.cache.maxAge, v));
    if (cached) return [200, { success: true, data: warned(cached, request.warnings) }];
    const options = jobOptions(request);
    const stored = request.cache.store ? key : null;
    const { runId, jobId } = await start(principal, job, null, null, request.changeTracking, options, stored);
    await compat.describe(jobId, 'scrape');
    const ended = await compat.waitForEnd(principal, runId, timeoutMs);
    if (ended.run.status === 'running') {
      await compat.cancel(principal, ended);
      const error = `The scrape did not finish within its timeout of ${timeoutMs} ms.`;
      return [408, { success: false, code: 'SCRAPE_TIMEOUT', error }];
    }
    const [document] = await documentsOf(principal, ended, v, { limit: 1 }).then((page) => page.data);
    if (document)
      return [200, { success: true, data: warned(withScrapeId(document, runId), request.warnings) }];
    const { failed } = await compat.errors(ended, 1);
    const failure = failed[0] && scrapeFailure(failed[0]);
    if (failure) return [failure.status, { success: false, code: failure.code, error: failure.error }];
    const data = withScrapeId(await failedDocument(ended, v), runId);
    return [200, { success: true, data: warned(data, request.warnings) }];
  });

  router.post(
    '/parse',
    ...parseRoute({ ...deps.parse, usage: deps.usage, auth: deps.auth, model: deps.model }),
  );

  route('get', '/scrape/:id', async (req, v, principal) => {
    const run = await compat.get(principal, idOf(req));
    if (run.kind !== 'scrape') throw new AppError(404, 'Scrape not found.');
    if (run.run.status === 'running') throw new AppError(404, 'The scrape has not finished yet.');
    const [document] = await documentsOf(principal, run, v, { limit: 1 }).then((page) => page.data);
    return [
      200,
      { success: true, data: withScrapeId(document ?? (await failedDocument(run, v)), run.run.id) },
    ];
  });

  // A finished scrape's live page (docs/api.md §18), v2 only; its owner's alone, as GET's answer.
  const interactable = async (req: Request, v: FirecrawlVersion, principal: Principal) => {
    if (v !== 'v2') throw new AppError(404, `No route ${req.method} ${req.baseUrl}${req.path}.`);
    const run = await compat.get(principal, idOf(req));
    if (run.kind !== 'scrape') throw new AppError(404, 'Scrape not found.');
    if (run.run.status === 'running') throw new AppError(404, 'The scrape has not finished yet.');
    return run.run.id;
  };
  route('post', '/scrape/:id/interact', async (req, v, principal) => {
    const { code, timeoutMs } = valid(parseInteractRequest(req.body));
    const id = await interactable(req, v, principal);
    return [200, interactBody(await deps.interact.run(id, principal.userId, code, timeoutMs))];
  });
  route('delete', '/scrape/:id/interact', async (req, v, principal) => {
    const { sessionMs } = await deps.interact.stop(await interactable(req, v, principal), principal.userId);
    return [
      200,
      { success: true, status: 'stopped', ...(sessionMs !== null && { sessionDurationMs: sessionMs }) },
    ];
  });

  for (const kind of ['crawl', 'batch/scrape'] as const) {
    route('post', `/${kind}`, async (req, v, principal) => {
      if (kind === 'crawl') {
        const parsed = valid(parseCrawlRequest(req.body, v));
        const request = {
          ...parsed,
          scrapeOptions: located(parsed.scrapeOptions, 'scrapeOptions.location.country'),
        };
        needModel(request.scrapeOptions, 'scrapeOptions.');
        const { job, webhook } = crawlJob(request);
        const { runId, jobId } = await start(
          principal,
          job,
          null,
          jobWebhook(req, webhook, 'crawl'),
          request.scrapeOptions.changeTracking,
          jobOptions(request.scrapeOptions),
        );
        await compat.describe(jobId, 'crawl', crawlOptionsShown(req.body));
        const warning = warningOf(request.scrapeOptions.warnings);
        return [
          200,
          { success: true, id: runId, url: `${base}/${v}/crawl/${runId}`, ...(warning && { warning }) },
        ];
      }
      const batchRequest = located(valid(parseBatchScrapeRequest(req.body, v)), 'location.country');
      const warning = warningOf(batchRequest.warnings);
      needModel(batchRequest);
      const batch = batchScrapeJob(batchRequest);
      const { runId } = await start(
        principal,
        batch.job,
        batch.urls,
        jobWebhook(req, batch.webhook, 'batch_scrape'),
        batchRequest.changeTracking,
        jobOptions(batchRequest),
      );
      return [
        200,
        {
          success: true,
          id: runId,
          url: `${base}/${v}/batch/scrape/${runId}`,
          invalidURLs: batch.invalidURLs,
          ...(warning && { warning }),
        },
      ];
    });
    if (kind === 'crawl') {
      const activeCrawls: Handler = async (_req, _v, principal) => {
        const active = await compat.active(principal, 'crawl');
        const crawls = active.map((a) => ({
          id: a.runId,
          teamId: principal.userId,
          url: a.source,
          options: a.options,
        }));
        return [200, { success: true, crawls }];
      };
      // v2 names it `ongoing` as well; both come before `/crawl/:id`.
      route('get', '/crawl/active', activeCrawls);
      route('get', '/crawl/ongoing', activeCrawls);
    }
    route('get', `/${kind}/:id`, async (req, v, principal) => {
      const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
      return [200, (await status(principal, v, kind, idOf(req), cursor)).body];
    });
    route('delete', `/${kind}/:id`, async (req, _v, principal) => {
      await compat.cancel(principal, await compat.get(principal, idOf(req)));
      return [200, { success: true, status: 'cancelled' }];
    });
    // v1's SDK asks for the errors with DELETE.
    const listErrors: Handler = async (req, _v, principal) => {
      const run = await compat.get(principal, idOf(req));
      const { failed, robots } = await compat.errors(run);
      const errors = failed.map((e) => ({
        id: `${run.run.id}-${e.seq}`,
        url: e.url,
        error: e.message,
        code: e.code,
        timestamp: (e.at ?? run.run.startedAt).toISOString(),
      }));
      return [200, crawlErrorsBody(errors, robots)];
    };
    route('get', `/${kind}/:id/errors`, listErrors);
    route('delete', `/${kind}/:id/errors`, listErrors);
  }

  route('post', '/map', async (req, v, principal) => {
    const map = mapJob(valid(parseMapRequest(req.body, v)));
    const { runId } = await start(principal, map.job);
    let run = await compat.waitForEnd(principal, runId, map.timeoutMs);
    if (run.run.status === 'running') {
      await compat.cancel(principal, run);
      run = await compat.get(principal, runId);
    }
    const found = await compat.foundUrls(run, MAP_URLS_READ);
    const described = new Map<string, MapLink>();
    for (let cursor: string | undefined, more = true; more; ) {
      const page = await compat.documents(principal, run, { limit: STATUS_PAGE, cursor });
      for (const doc of page.items) {
        const title = doc.metadata?.title ?? undefined;
        const description = doc.metadata?.description ?? undefined;
        described.set(doc.url, { url: doc.url, title, description });
      }
      cursor = page.nextCursor ?? undefined;
      more = cursor !== undefined;
    }
    const seen = new Set<string>();
    const links: MapLink[] = [];
    for (const { url } of found) {
      const key = map.ignoreQueryParameters ? url.replace(/[?#].*$/, '') : url;
      if (seen.has(key)) continue;
      seen.add(key);
      links.push(described.get(url) ?? { url });
    }
    // The run accepts its fetched pages and a bounded number of URLs beyond them (docs/api.md §18).
    const accepted = (map.job.crawl?.max_pages ?? 0) + ACCEPTED_BEYOND_MAX_PAGES;
    const warning =
      found.length >= accepted && map.limit > accepted
        ? `The map stopped at ${found.length} URLs: a map accepts its ${map.job.crawl?.max_pages} fetched pages and at most ${ACCEPTED_BEYOND_MAX_PAGES} URLs beyond them.`
        : undefined;
    return [200, mapBody((await rankLinks(links, map.search)).slice(0, map.limit), v, warning)];
  });

  route('post', '/search', async (req, v, principal) => {
    const request = valid(parseSearchRequest(req.body, v));
    const options = request.scrapeOptions;
    if (options) needModel(options, 'scrapeOptions.');
    const outcome = await runSearch(
      { client: deps.search, compat, parseJob: deps.parseJob },
      principal,
      {
        query: request.query,
        limit: request.limit,
        lang: request.lang,
        country: request.country,
        tbs: request.tbs,
        timeoutMs: request.timeout,
      },
      options && ((urls) => searchScrapeJob(urls, options)),
      options?.changeTracking ?? null,
    );
    const formats = options?.formats ?? [];
    const hits = outcome.results.map((result): SearchHit => {
      const page = outcome.scrape?.pages.get(result.url);
      if (!page) return result;
      const document = page.document
        ? firecrawlDocument(page.document, {
            version: v,
            formats,
            screenshotUrl: page.screenshotUrl,
            actions: options?.actionOutputs,
            attributes: options?.attributes,
          })
        : { metadata: { sourceURL: result.url, url: result.url, error: page.error?.message } };
      return { ...result, document: { ...document } };
    });
    return [200, searchBody(hits, v, [...request.warnings, ...outcome.warnings])];
  });

  route('post', '/extract', async (req, v, principal) => {
    const request = valid(parseExtractRequest(req.body, v));
    if (!deps.model)
      throw new AppError(400, `The request is invalid: ${NO_MODEL_MESSAGE}.`, {
        details: { [request.json.schema ? 'schema' : 'prompt']: NO_MODEL_MESSAGE },
      });
    const { job, urls } = extractJob(request);
    const { runId } = await start(principal, job, urls);
    return [
      200,
      {
        success: true,
        id: runId,
        urlTrace: [],
        ...(request.warnings.length && { warning: request.warnings.join('; ') }),
      },
    ];
  });

  route('get', '/extract/:id', async (req, _v, principal) => {
    const run = await compat.get(principal, idOf(req));
    const { run: r } = run;
    if (r.status === 'running')
      return [
        200,
        { success: true, status: 'processing', data: null, expiresAt: run.expiresAt.toISOString() },
      ];
    const records = await compat.records(principal, run, EXTRACT_RECORDS);
    const { failed } = await compat.errors(run, 10);
    const status =
      r.status === 'cancelled'
        ? 'cancelled'
        : records.length === 0 && r.successfulUrls === 0
          ? 'failed'
          : 'completed';
    const warnings = await compat.warnings(run, 10);
    return [
      200,
      {
        success: status !== 'failed',
        status,
        data: mergeExtracted(records),
        expiresAt: run.expiresAt.toISOString(),
        ...(status === 'failed' && { error: failed[0]?.message ?? 'no page could be read' }),
        ...(warnings.length > 0 && { warning: warnings.join('; ') }),
      },
    ];
  });

  route('get', '/team/token-usage', async (_req, _v, principal) => {
    const usage = await deps.tokens.usage(principal.userId);
    return [
      200,
      {
        success: true,
        data: {
          remainingTokens: usage.limit === null ? null : Math.max(0, usage.limit - usage.used),
          planTokens: usage.limit,
          usedTokens: usage.used,
          billingPeriodStart: usage.dayStart.toISOString(),
          billingPeriodEnd: usage.dayEnd.toISOString(),
        },
      },
    ];
  });

  for (const [path, handler] of teamRoutes(deps))
    route('get', path, async (_req, v, principal) => [200, await handler(principal, v)]);

  for (const endpoint of UNSUPPORTED_ENDPOINTS) {
    const path = endpoint.path.replace(/^\/v[12]/, '');
    const versionOf = endpoint.path.slice(0, 3);
    router[endpoint.method](path, (req: Request, _res: Response, next: NextFunction) => {
      if (req.baseUrl !== versionOf) return next();
      throw new AppError(501, unsupportedMessage(endpoint));
    });
  }
  router.use((req: Request) => {
    throw new AppError(404, `No route ${req.method} ${req.baseUrl}${req.path}.`);
  });
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appErr = toAppError(err);
    if (appErr.status >= 500 && appErr.status !== 501)
      deps.log.error({ err, req_id: req.requestId, path: req.originalUrl }, 'request failed');
    if (res.headersSent) return res.destroy();
    const details = (appErr.toBody() as { details?: Record<string, string> }).details;
    res.status(appErr.status).json(errorBody(appErr.message, details));
  });

  /** A crawl's or batch's status with a page of its documents, and the cursor of the next page. */
  async function status(
    principal: Principal,
    v: FirecrawlVersion,
    kind: WatchedKind,
    id: string,
    cursor: string | undefined,
  ) {
    const run = await compat.get(principal, id);
    const page = await documentsOf(principal, run, v, { limit: STATUS_PAGE, cursor });
    const next = page.nextCursor && `${base}/${v}/${kind}/${run.run.id}?cursor=${page.nextCursor}`;
    const { run: r } = run;
    const urls = {
      total: r.totalUrls,
      successful: r.successfulUrls,
      failed: r.failedUrls,
      skipped: r.skippedUrls,
    };
    const body = crawlStatus({
      version: v,
      runStatus: r.status,
      urls,
      expiresAt: run.expiresAt,
      next,
      data: page.data,
    });
    return { body, nextCursor: page.nextCursor };
  }

  /** A page of the run's documents in Firecrawl's shape, with the formats its job asked for. */
  async function documentsOf(
    principal: Principal,
    run: CompatRun,
    v: FirecrawlVersion,
    opts: { limit: number; cursor?: string | undefined },
  ) {
    const page = await compat.documents(principal, run, opts);
    // The request's own formats and actions when its job stored them (docs/api.md §26).
    const asked = readJobOptions(run.firecrawl);
    const formats = asked?.formats ?? firecrawlFormats(run.formats, run.extract, run.tracking);
    const data = page.items.map((doc, i) =>
      firecrawlDocument(doc, {
        version: v,
        formats,
        screenshotUrl: page.screenshots[i] ?? null,
        actions: asked?.actions,
        attributes: asked?.attributes,
      }),
    );
    return { data, nextCursor: page.nextCursor };
  }

  /** The document of the owner's scrape stored under `key` within `maxAge` ms, marked a cache hit; null when none. */
  async function fromCache(principal: Principal, key: string, maxAge: number, v: FirecrawlVersion) {
    const run = await compat.cached(principal, key, new Date(Date.now() - maxAge));
    if (!run) return null;
    const [document] = (await documentsOf(principal, run, v, { limit: 1 })).data;
    if (!document) return null;
    const cachedAt = (run.run.finishedAt ?? run.run.startedAt).toISOString();
    return { ...document, metadata: { ...document.metadata, cacheState: 'hit', cachedAt } };
  }

  /** The document of a scrape whose page failed: its metadata, with why. */
  async function failedDocument(run: CompatRun, v: FirecrawlVersion) {
    const { failed, robots } = await compat.errors(run, 1);
    const error =
      failed[0]?.message ?? (robots[0] ? 'robots.txt does not allow this page' : 'the page failed');
    const doc = {
      url: failed[0]?.url ?? run.source,
      status_code: failed[0]?.httpStatus ?? null,
      truncated: [],
    };
    return firecrawlDocument(doc, { version: v, formats: [], screenshotUrl: null, error });
  }

  return Object.assign(router, { status: status satisfies StatusReader });
}

/** A scrape's document with its id, which GET /v2/scrape/{id} reads it again by. */
const withScrapeId = (document: FirecrawlDocument, id: string): FirecrawlDocument => ({
  ...document,
  metadata: { ...document.metadata, scrapeId: id },
});

/** A document with the request's warnings joined to its own. */
const warned = (document: FirecrawlDocument, warnings: readonly string[]): FirecrawlDocument => {
  const all = [...warnings, ...(document.warning ? [document.warning] : [])];
  return all.length > 0 ? { ...document, warning: all.join('; ') } : document;
};

/** Request fields that are not a crawl's options (its webhook may carry secrets in its headers). */
const NOT_OPTIONS = new Set(['url', 'webhook', 'origin', 'integration']);

/**
 * A crawl's options as Firecrawl's active crawls show them: the request as given, but its URL and
 * webhook, and with the values of its pages' `headers` masked (secrets of docs/api.md §14: an
 * `Authorization` or `Cookie` among them).
 */
function crawlOptionsShown(body: unknown): Record<string, unknown> {
  const shown = Object.fromEntries(
    Object.entries(body as Record<string, unknown>).filter(([k]) => !NOT_OPTIONS.has(k)),
  );
  const scrape = shown.scrapeOptions as { headers?: unknown } | null | undefined;
  if (typeof scrape?.headers === 'object' && scrape.headers !== null)
    shown.scrapeOptions = {
      ...scrape,
      headers: Object.fromEntries(Object.keys(scrape.headers).map((name) => [name, SECRET_MASK])),
    };
  return shown;
}

/** A parsed request's value, or the 400 of its problems in Firecrawl's shape. */
function valid<T>(parsed: Parsed<T>): T {
  if (parsed.ok) return parsed.value;
  throw new AppError(400, parsed.message, { details: parsed.details });
}
