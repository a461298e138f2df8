import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AppError, type Principal, TOKEN_FORMAT } from '@scrapejobs/domain';
import type { FirecrawlDocument, FirecrawlVersion, StatusBody } from '@scrapejobs/firecrawl';
import type { Logger } from '@scrapejobs/logging';
import { type WebSocket, WebSocketServer } from 'ws';

export type WatchedKind = 'crawl' | 'batch/scrape';

/** A crawl's or batch's status answer (GET /v2/crawl/{id}) and the cursor of its next page of documents. */
export type StatusReader = (
  principal: Principal,
  version: FirecrawlVersion,
  kind: WatchedKind,
  id: string,
  cursor: string | undefined,
) => Promise<{ body: StatusBody; nextCursor: string | null }>;

export interface WatchDeps {
  /** The principal of an API key, null for an unknown or revoked one. */
  lookup: (token: string) => Promise<Principal | null>;
  status: StatusReader;
  log: Logger;
  /** How often a watched crawl is looked at (ms). */
  intervalMs?: number;
}

/** Firecrawl's SDK watches a crawl or batch here, its API key as the WebSocket subprotocol. */
const WATCHED = /^\/(v1|v2)\/(crawl|batch\/scrape)\/([A-Za-z0-9_]+)\/?(?:\?.*)?$/;
const DEFAULT_INTERVAL_MS = 1000;
/** Pages of documents read a look at most (100 documents each): the status answers' own bound. */
const MAX_PAGES_A_LOOK = 100;
/** Messages from the watcher are not expected; a large one ends the connection. */
const MAX_PAYLOAD = 4096;

/**
 * The `upgrade` listener of the API's HTTP server: the watcher of Firecrawl's JavaScript SDK
 * (docs/api.md §18). It sends `catchup` (the status with the documents so far), a `document` for
 * each page stored after, and `done` when the crawl completed (`error` when it failed, was
 * cancelled or cannot be read), then closes. Other upgrade requests are refused.
 */
export function crawlWatcher(deps: WatchDeps) {
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_PAYLOAD,
    handleProtocols: (protocols) => protocols.values().next().value ?? false,
  });
  return (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const match = WATCHED.exec(req.url ?? '');
    if (!match) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [, version, kind, id] = match as unknown as [string, FirecrawlVersion, WatchedKind, string];
    server.handleUpgrade(req, socket, head, (ws) => {
      watch(deps, ws, { version, kind, id }).catch((err: unknown) => {
        deps.log.error({ err, path: req.url }, 'crawl watcher failed');
        ws.terminate();
      });
    });
  };
}

async function watch(
  deps: WatchDeps,
  ws: WebSocket,
  target: { version: FirecrawlVersion; kind: WatchedKind; id: string },
): Promise<void> {
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const send = (message: object) => ws.send(JSON.stringify(message));
  // The SDK reports the error, then stops at the failed status; on a close alone it would fall back
  // to polling an address that cannot answer, without end.
  const fail = (error: string) => {
    send({ type: 'error', error });
    send({ status: 'failed', completed: 0, total: 0 });
    ws.close(1000);
  };
  const token = ws.protocol;
  const principal = TOKEN_FORMAT.test(token) ? await deps.lookup(token) : null;
  if (!principal) return fail('The API key is unknown or has been revoked.');
  if (!principal.scopes.includes('jobs:read')) return fail('The API key lacks the jobs:read scope.');

  const sent = new Set<string>();
  let first = true;
  while (ws.readyState === ws.OPEN) {
    let look: { body: StatusBody; documents: FirecrawlDocument[] };
    try {
      look = await lookAt(deps.status, principal, target);
    } catch (err) {
      const status = (err as AppError).status;
      if (typeof status !== 'number' || status >= 500) throw err;
      return fail((err as Error).message);
    }
    const fresh = look.documents.filter((doc) => {
      const key = documentKey(doc);
      if (sent.has(key)) return false;
      sent.add(key);
      return true;
    });
    const { data: _page, next: _next, ...progress } = look.body;
    if (first) send({ type: 'catchup', data: { ...progress, data: fresh } });
    else for (const doc of fresh) send({ type: 'document', data: doc });
    first = false;
    if (progress.status === 'completed') {
      send({ type: 'done', data: { ...progress, data: [] } });
      ws.close(1000);
      return;
    }
    if (progress.status !== 'scraping') return fail(`The ${target.kind} ${progress.status}.`);
    await Promise.race([sleep(deps.intervalMs ?? DEFAULT_INTERVAL_MS), closed]);
  }
}

/** The status and every document so far (within MAX_PAGES_A_LOOK pages). */
async function lookAt(
  status: StatusReader,
  principal: Principal,
  target: { version: FirecrawlVersion; kind: WatchedKind; id: string },
) {
  const documents: FirecrawlDocument[] = [];
  let body: StatusBody | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES_A_LOOK; page++) {
    const read = await status(principal, target.version, target.kind, target.id, cursor);
    body ??= read.body;
    documents.push(...read.body.data);
    if (!read.nextCursor) break;
    cursor = read.nextCursor;
  }
  return { body: body as StatusBody, documents };
}

const documentKey = (doc: FirecrawlDocument): string =>
  String(doc.metadata.scrapeId ?? doc.metadata.sourceURL ?? doc.metadata.url ?? JSON.stringify(doc));
