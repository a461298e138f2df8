import http from 'node:http';
import https from 'node:https';
import { BlockedTargetError, OutboundGuard, type Resolve } from '@scrapejobs/outbound';

export interface PostResult {
  /** The status answered, or null when no answer came. */
  statusCode: number | null;
  /** Why there was no answer, or why a status is not a success worth noting (a redirect). */
  error: string | null;
  durationMs: number;
}

export interface PosterOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Sockets kept per origin; the worker's concurrency. */
  maxSockets: number;
  resolve?: Resolve;
}

const USER_AGENT = 'scrapejobs-webhooks/1.0';

function describe(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err instanceof BlockedTargetError) return `blocked target: ${err.message}`;
  switch (err.code) {
    case 'WEBHOOK_TIMEOUT':
      return `no answer within ${timeoutMs} ms`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${err.code})`;
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}

/**
 * POSTs webhook bodies: no redirects followed, a deadline on the answer, keep-alive sockets,
 * and every connection checked against private and metadata addresses by the outbound guard's
 * agents (the host before connecting, each resolved address, the connected peer).
 */
export class WebhookPoster {
  readonly #opts: PosterOptions;
  readonly #agents: { 'http:': http.Agent; 'https:': https.Agent };

  constructor(opts: PosterOptions) {
    this.#opts = opts;
    const guard = new OutboundGuard({ allowPrivate: opts.allowPrivate, resolve: opts.resolve });
    const agents = guard.agents({
      keepAlive: true,
      maxSockets: opts.maxSockets,
      maxFreeSockets: opts.maxSockets,
      scheduling: 'lifo',
    });
    this.#agents = { 'http:': agents.http, 'https:': agents.https };
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const done = (statusCode: number | null, error: string | null): PostResult => ({
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    const target = new URL(url);
    const deadline = started + this.#opts.timeoutMs;
    let result = await this.#once(target, body, headers, deadline);
    // A kept-alive socket the receiver closed just as it was reused: not the receiver's answer.
    if (result.retryable) result = await this.#once(target, body, headers, deadline);
    if ('status' in result) {
      const note = result.status >= 300 && result.status < 400 ? 'redirect not followed' : null;
      return done(result.status, note);
    }
    return done(null, describe(result.error, this.#opts.timeoutMs));
  }

  #once(
    target: URL,
    body: string,
    headers: Record<string, string>,
    deadline: number,
  ): Promise<({ status: number } | { error: NodeJS.ErrnoException }) & { retryable?: boolean }> {
    const isHttps = target.protocol === 'https:';
    const request = isHttps ? https.request : http.request;
    return new Promise((resolve) => {
      let settled = false;
      const req = request(
        target,
        {
          method: 'POST',
          agent: this.#agents[isHttps ? 'https:' : 'http:'],
          headers: { ...headers, 'Content-Length': Buffer.byteLength(body), 'User-Agent': USER_AGENT },
        },
        (res) => {
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0 });
          // The answer's body is not used; read it (briefly) so the socket can be reused.
          const drain = setTimeout(() => res.destroy(), 1_000);
          res.on('close', () => clearTimeout(drain));
          res.resume();
        },
      );
      const timer = setTimeout(
        () => req.destroy(Object.assign(new Error('timeout'), { code: 'WEBHOOK_TIMEOUT' })),
        Math.max(0, deadline - performance.now()),
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve({ error, retryable: req.reusedSocket && error.code === 'ECONNRESET' });
      });
      req.end(body);
    });
  }

  close(): void {
    this.#agents['http:'].destroy();
    this.#agents['https:'].destroy();
  }
}
