import { hkdfSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { consoleRouter } from '@scrapejobs/console';
import type { Database } from '@scrapejobs/db';
import {
  type Accounts,
  AppError,
  type CompatService,
  type JobsService,
  type KeyCache,
  type KeysService,
  type ResultsService,
  UsageService,
  type WebhooksService,
} from '@scrapejobs/domain';
import { errorBody, unsupportedMessage } from '@scrapejobs/firecrawl';
import { type LlmEnv, modelSettings, TokenLedger } from '@scrapejobs/llm';
import type { Logger } from '@scrapejobs/logging';
import { histogram, type Registry } from '@scrapejobs/observability';
import { DEVELOPMENT_SECRET_KEY } from '@scrapejobs/outbound';
import { type SearchEnv, SearxngClient, searchSettings } from '@scrapejobs/search';
import type { Queue } from 'bullmq';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { ApiConfig } from './config.ts';
import type { FileParser } from './firecrawl/file-parser.ts';
import type { InteractService } from './firecrawl/interact.ts';
import { firecrawlRouter } from './firecrawl/routes.ts';
import { crawlWatcher } from './firecrawl/watch.ts';
import { adminRoutes } from './http/admin.ts';
import { keyLookup, resolveAuth } from './http/auth.ts';
import { errorHandler } from './http/error-handler.ts';
import { healthRoutes } from './http/health.ts';
import { buildOpenApi } from './http/openapi.ts';
import { rateLimit } from './http/rate-limit.ts';
import { mountRoutes } from './http/routes.ts';
import { parseCreateJob } from './jobs/input.ts';
import type { QueryCompiler } from './jobs/query-compiler.ts';
import { jobRoutes } from './jobs/routes.ts';
import { resultRoutes } from './results/routes.ts';
import { searchRoutes } from './search/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';

const swaggerUiDir: string = createRequire(import.meta.url)('swagger-ui-dist').getAbsoluteFSPath();

/** The services the API and its console share: built once per process (runtime.ts). */
export interface ApiServices {
  jobs: JobsService;
  keys: KeysService;
  results: ResultsService;
  webhooks: WebhooksService;
  accounts: Accounts;
  /** The Firecrawl-compatible API's work (docs/api.md §18). */
  compat: CompatService;
  /** Interact sessions of Firecrawl scrapes (docs/api.md §18). */
  interact: InteractService;
}

export interface AppParts {
  config: Pick<
    ApiConfig,
    | 'API_RATE_LIMIT_PER_MINUTE'
    | 'QUEUE_PREFIX'
    | 'PROXY_URLS'
    | 'TRUST_PROXY'
    | 'ADMIN_TOKEN'
    | 'WEBHOOK_SECRET_KEY'
    | 'NODE_ENV'
    | 'PUBLIC_BASE_URL'
    | 'ACCOUNT_MONTHLY_CREDITS'
    | 'MAX_RUNNING_URLS_PER_USER'
    | 'PARSE_MAX_BYTES'
    | keyof LlmEnv
    | keyof SearchEnv
  >;
  db: Database;
  /** Fails fast while Redis is away (no offline queue), so requests get 503 instead of hanging. */
  redis: Redis;
  /** Principals of recently used keys, attached to Redis for key changes. */
  keyCache: KeyCache;
  services: ApiServices;
  log: Logger;
  registry: Registry;
  /** Shown in the operators' dashboard. */
  queues: readonly Queue[];
  /** Compiles job queries off the event loop. */
  compiler: QueryCompiler;
  /** Converts the files of POST /v2/parse off the event loop. */
  files: FileParser;
}

/** The API's Express app, and the listener of its server's `upgrade` requests (the SDK's crawl watcher). */
export type ApiApp = express.Express & { upgrade: ReturnType<typeof crawlWatcher> };

const REQUEST_ID = /^[\w.:-]{1,128}$/;

const DOCS_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Scraping jobs API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui' });</script></body></html>`;

/**
 * The key of the console's sign-in form tokens, derived from the secret key every API process
 * is given (the development key without one, which the runtime warns about).
 */
const consoleFormKey = (secretKey: Buffer | undefined): Buffer =>
  Buffer.from(
    hkdfSync('sha256', secretKey ?? DEVELOPMENT_SECRET_KEY, '', 'scrapejobs console sign-in form', 32),
  );

/** The API and its console as an Express app, over services built elsewhere (runtime.ts). */
export function createApp(deps: AppParts): ApiApp {
  const { config, db, redis, log, services } = deps;
  const model = modelSettings(config);
  const jobRules = { proxies: config.PROXY_URLS, compiler: deps.compiler, model: model !== null };
  const search = searchSettings(config);
  const searchDeps = {
    client: search && new SearxngClient(search),
    compat: services.compat,
    parseJob: (raw: unknown, userId: string) => parseCreateJob(raw, jobRules, userId),
  };
  const routes = [
    ...jobRoutes(services.jobs, jobRules),
    ...searchRoutes(searchDeps, model !== null),
    ...resultRoutes(services.results),
    ...webhookRoutes(services.webhooks),
  ];
  const openApi = buildOpenApi(routes, '1.0.0');

  const latency = histogram(
    deps.registry,
    'http_request_duration_seconds',
    'API request latency by route and status.',
    [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ['method', 'route', 'status'],
  );

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);

  app.use((req: Request, res: Response, next: NextFunction) => {
    // Every answer, errors and downloads included: browsers must not guess another content type.
    res.set('X-Content-Type-Options', 'nosniff');
    const incoming = req.get('x-request-id');
    req.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.set('X-Request-Id', req.requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      latency.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      const auth = req.auth && 'principal' in req.auth ? req.auth.principal : undefined;
      log.info(
        {
          req_id: req.requestId,
          method: req.method,
          path: req.originalUrl,
          status: res.statusCode,
          duration_ms: seconds * 1000,
          key_id: auth?.keyId,
        },
        'request',
      );
    });
    next();
  });

  app.use(healthRoutes(db, redis));
  app.get('/metrics', async (_req: Request, res: Response) => {
    res.type(deps.registry.contentType).send(await deps.registry.metrics());
  });
  app.use(adminRoutes(config.ADMIN_TOKEN, deps.queues));
  app.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(openApi);
  });
  app.get('/docs', (_req: Request, res: Response) => {
    res.type('html').send(DOCS_PAGE);
  });
  app.use('/docs', express.static(swaggerUiDir, { index: false }));

  // Counts per key, or per client address without one (the console's requests always per address).
  const limit = rateLimit(redis, config.QUEUE_PREFIX, config.API_RATE_LIMIT_PER_MINUTE);
  // The account console: HTML pages with their own session auth, before the API's key auth.
  app.use(
    '/console',
    consoleRouter({
      redis,
      log,
      prefix: config.QUEUE_PREFIX,
      services,
      parseJob: (raw, userId) => parseCreateJob(raw, jobRules, userId),
      formKey: consoleFormKey(config.WEBHOOK_SECRET_KEY),
      rateLimit: limit,
      secureCookies: config.NODE_ENV === 'production',
    }),
  );
  const auth = resolveAuth(db, deps.keyCache);
  // Firecrawl's paths, with its error shape from authentication on (docs/api.md §18).
  const firecrawl = firecrawlRouter({
    compat: services.compat,
    interact: services.interact,
    parseJob: (raw, userId) => parseCreateJob(raw, jobRules, userId),
    auth: [auth, limit],
    publicBaseUrl: config.PUBLIC_BASE_URL,
    log,
    model: model !== null,
    tokens: new TokenLedger(redis, config.QUEUE_PREFIX, model?.tokensPerDay ?? 0),
    search: searchDeps.client,
    usage: new UsageService(db),
    monthlyCredits: config.ACCOUNT_MONTHLY_CREDITS ?? null,
    maxRunningUrls: config.MAX_RUNNING_URLS_PER_USER,
    proxies: config.PROXY_URLS,
    parse: { files: deps.files, maxBytes: config.PARSE_MAX_BYTES },
  });
  app.use(['/v1', '/v2'], firecrawl);
  // Firecrawl's catalogue of data providers (its MCP server's firecrawl_find_tools) lives outside /v2.
  app.get('/exchange/discover', (_req: Request, res: Response) => {
    res.status(501).json(errorBody(unsupportedMessage({ feature: 'the Alexandria catalogue' })));
  });
  app.use(auth);
  app.use(limit);
  app.use(mountRoutes(routes));
  app.use((req: Request) => {
    throw new AppError(404, `No route ${req.method} ${req.path}.`);
  });
  app.use(errorHandler(log));
  const upgrade = crawlWatcher({ lookup: keyLookup(db, deps.keyCache), status: firecrawl.status, log });
  return Object.assign(app, { upgrade });
}
