import { randomBytes } from 'node:crypto';
import { type Database, newId, type Prisma } from '@scrapejobs/db';
import { firecrawlStatus } from '@scrapejobs/firecrawl';
import { checkUrlTarget, type Resolve, type SecretBox, systemResolve } from '@scrapejobs/outbound';
import type pg from 'pg';
import { validationError } from '../errors.ts';
import type { Owner } from '../principal.ts';

// Firecrawl-style webhooks of crawls and batch scrapes (docs/api.md §18): one job-scoped row in
// `webhooks` per crawl or batch that asked for one, delivered by the webhook worker like any other.

/** A Firecrawl `webhook` as the compatible API parsed it. */
interface FirecrawlWebhookInput {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  events: readonly ('started' | 'page' | 'completed' | 'failed')[];
}

/** The names of a crawl's events (`crawl.*`) or of a batch scrape's (`batch_scrape.*`). */
type FirecrawlEventPrefix = 'crawl' | 'batch_scrape';

/** A crawl's or batch's webhook as `CompatService.start` takes it. */
export interface JobWebhook {
  webhook: FirecrawlWebhookInput;
  prefix: FirecrawlEventPrefix;
  /** Where a 400 about the URL points: `webhook` (given as a string) or `webhook.url`. */
  field: string;
}

/**
 * Outbox row kind (never subscribable by a native webhook) of a page of a run whose job has a
 * Firecrawl webhook asking for `page`: written by RunStore with the page's outcome, data
 * `PageEventData`.
 */
export const FIRECRAWL_PAGE_EVENT = 'firecrawl.page';

/** A page event's data: the page, and its screenshot's URL when it has one. */
export interface PageEventData {
  run_id: string;
  seq: number;
  url: string;
  screenshot_url: string | null;
}

/** This service's events (and the page event) that have a Firecrawl counterpart. */
const FIRECRAWL_EVENT_OF = {
  'job.started': 'started',
  [FIRECRAWL_PAGE_EVENT]: 'page',
  'job.completed': 'completed',
  'job.failed': 'failed',
} as const;

export type FirecrawlSourceKind = keyof typeof FIRECRAWL_EVENT_OF;

export const isFirecrawlSourceKind = (kind: string): kind is FirecrawlSourceKind =>
  Object.hasOwn(FIRECRAWL_EVENT_OF, kind);

// RFC 9110 field names, and values without control characters that would end or split a header.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;

/**
 * The rules the compatible API's parser cannot see, as POST /webhooks applies them: https for a
 * live key, an allowed target (docs/api.md §7), and headers that can be sent.
 */
export async function checkJobWebhook(
  owner: Owner,
  { webhook, field }: JobWebhook,
  settings: { allowPrivate: boolean; resolve?: Resolve | undefined },
): Promise<void> {
  if (owner.mode === 'live' && new URL(webhook.url).protocol !== 'https:')
    throw validationError({ [field]: 'must be an https URL for a live-mode key' });
  const target = await checkUrlTarget(webhook.url, settings.allowPrivate, settings.resolve ?? systemResolve);
  if (!target.ok) throw validationError({ [field]: target.reason });
  for (const [name, value] of Object.entries(webhook.headers)) {
    if (!HEADER_NAME.test(name)) throw validationError({ 'webhook.headers': `${name} is not a header name` });
    if (!HEADER_VALUE.test(value))
      throw validationError({ [`webhook.headers.${name}`]: 'must not contain control characters' });
  }
}

/** The job-scoped webhook row of a crawl or batch: this job's events with a Firecrawl counterpart asked for. */
export function jobWebhookRow(
  owner: Owner,
  jobId: string,
  { webhook, prefix }: JobWebhook,
  now: Date,
): Prisma.WebhookUncheckedCreateInput {
  const wanted = new Set<string>(webhook.events);
  const events = Object.entries(FIRECRAWL_EVENT_OF)
    .filter(([, firecrawl]) => wanted.has(firecrawl))
    .map(([kind]) => kind);
  return {
    id: newId('wh', now.getTime()),
    userId: owner.userId,
    mode: owner.mode,
    url: webhook.url,
    events,
    // Signed with the account's Firecrawl webhook secret, read at delivery time; none of its own.
    secretEncrypted: '',
    active: true,
    createdAt: now,
    jobId,
    style: 'firecrawl',
    eventPrefix: prefix,
    headers: webhook.headers,
    metadata: webhook.metadata as Prisma.InputJsonObject,
  };
}

type FirecrawlEvent = (typeof FIRECRAWL_EVENT_OF)[FirecrawlSourceKind];

/**
 * The Firecrawl event an event is: a run that failed with some page stored is `completed`, as
 * GET /v2/crawl/{id} reads it (firecrawlStatus), its failed pages listed under …/errors, while the
 * native job is `failed` (docs/api.md §3.8).
 */
export function firecrawlEventOf(event: { kind: FirecrawlSourceKind; data: unknown }): FirecrawlEvent {
  if (event.kind !== 'job.failed') return FIRECRAWL_EVENT_OF[event.kind];
  const successful = (event.data as { error?: { successful_urls?: unknown } } | null)?.error?.successful_urls;
  return firecrawlStatus('failed', typeof successful === 'number' ? successful : 0) === 'completed'
    ? 'completed'
    : 'failed';
}

/** Whether a job-scoped webhook that subscribed `events` (this service's kinds) wants this Firecrawl event. */
export const wantsFirecrawlEvent = (events: readonly string[], wanted: FirecrawlEvent): boolean =>
  events.some((kind) => isFirecrawlSourceKind(kind) && FIRECRAWL_EVENT_OF[kind] === wanted);

/** A Firecrawl delivery's type that ends its crawl or batch (`crawl.completed`, `batch_scrape.failed`, …). */
export const isFirecrawlTerminal = (type: string): boolean => /\.(completed|failed)$/.test(type);

/**
 * A delivery's body in Firecrawl's shape `{success, type, id, webhookId, data, metadata, error}`:
 * `id` the run id (the compatible API's id), `webhookId` the event id (the same on every retry),
 * `data` the page's document for a page event, else empty.
 */
export function firecrawlBody(
  prefix: string,
  event: { id: string; kind: FirecrawlSourceKind; data: unknown },
  metadata: unknown,
  documents: readonly unknown[] = [],
): { type: string; body: string } {
  const data = (event.data ?? {}) as { run_id?: string; error?: { message?: string } };
  const name = firecrawlEventOf(event);
  const type = `${prefix}.${name}`;
  const failed = name === 'failed';
  const body = {
    success: !failed,
    type,
    id: data.run_id ?? null,
    webhookId: event.id,
    data: documents,
    metadata: metadata ?? {},
    ...(failed && { error: data.error?.message ?? 'The job failed.' }),
  };
  return { type, body: JSON.stringify(body) };
}

/** What the account's secret is bound to when sealed (one per user, both modes). */
const secretContext = (userId: string) => `firecrawl-webhook-secret:${userId}`;

/** The account's Firecrawl webhook secret, sealed as stored; throws SecretBoxError when it cannot be opened. */
export const openFirecrawlSecret = (box: SecretBox, sealed: string, userId: string): string =>
  box.open(sealed, secretContext(userId));

const newSecret = () => `fcwhsec_${randomBytes(32).toString('base64url')}`;

/** Makes the account's secret unless it has one; concurrent calls keep a single secret. */
export async function ensureFirecrawlSecret(pool: pg.Pool, box: SecretBox, userId: string, now: Date) {
  await pool.query({
    name: 'firecrawl-secret-ensure',
    text: `INSERT INTO firecrawl_webhook_secrets (user_id, secret_encrypted, created_at)
           VALUES ($1, $2, $3::timestamptz AT TIME ZONE 'UTC') ON CONFLICT (user_id) DO NOTHING`,
    values: [userId, box.seal(newSecret(), secretContext(userId)), now],
  });
}

/**
 * The account's compatible-API webhook secret (docs/api.md §18, §26): made when first needed (the
 * first crawl or batch with a webhook, the console's account page, or the first delivery of a
 * webhook whose account has none), so that every Firecrawl webhook is signed; shown and rotated in the console. The worker reads it at each delivery, so
 * a rotation applies to every delivery attempted after it, those of crawls already started included.
 */
export class FirecrawlSecrets {
  readonly #db: Database;
  readonly #box: SecretBox;
  readonly #now: () => Date;

  constructor(db: Database, box: SecretBox, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#box = box;
    this.#now = now;
  }

  /** When the current secret was made, or null without one. */
  async createdAt(userId: string): Promise<Date | null> {
    const row = await this.#db.firecrawlWebhookSecret.findUnique({
      where: { userId },
      select: { createdAt: true },
    });
    return row?.createdAt ?? null;
  }

  /** Makes the account's secret unless it has one; concurrent calls keep a single secret. */
  ensure(userId: string): Promise<void> {
    return ensureFirecrawlSecret(this.#db.pool, this.#box, userId, this.#now());
  }

  /** The account's secret (made first when it has none); throws SecretBoxError when it cannot be opened. */
  async reveal(userId: string): Promise<string> {
    await this.ensure(userId);
    const row = await this.#db.firecrawlWebhookSecret.findUniqueOrThrow({
      where: { userId },
      select: { secretEncrypted: true },
    });
    return openFirecrawlSecret(this.#box, row.secretEncrypted, userId);
  }

  /** A new secret replaces the current one (or is the first), returned to be shown. */
  async rotate(userId: string): Promise<string> {
    const secret = newSecret();
    const data = { secretEncrypted: this.#box.seal(secret, secretContext(userId)), createdAt: this.#now() };
    await this.#db.firecrawlWebhookSecret.upsert({
      where: { userId },
      create: { userId, ...data },
      update: data,
    });
    return secret;
  }
}
