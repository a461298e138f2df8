import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { BlockedTargetError } from '@scrapejobs/outbound';
import type { AddressPolicy } from './address.ts';
import { abortable } from './backoff.ts';
import type { Agents, ConnectionPool } from './connections.ts';
import { FetchError } from './errors.ts';
import { scraperGuard } from './guard.ts';
import { createProxyAgents, type TunnelState } from './proxy-agent.ts';

// Failures that another try cannot fix: the name does not exist, the certificate is wrong.
const PERMANENT_NETWORK_CODES = new Set([
  'ENOTFOUND',
  'ERR_INVALID_URL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

export interface AttemptRequest {
  url: URL;
  proxyUrl: string | null;
  policy: AddressPolicy;
  lookup: LookupFunction;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal | undefined;
  /** Sent to the target as they are (inside the tunnel behind a proxy, never on its CONNECT). */
  headers: Readonly<Record<string, string>>;
  /** Kept-alive connections for a direct request; without them it opens its own and closes it. */
  connections: ConnectionPool | undefined;
  /** Accept the site's certificate unchecked (a kept-alive agent pools such connections apart). */
  skipTlsVerification?: boolean;
}

export interface AttemptResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The decoded body of a 2xx answer; empty for any other status. */
  body: Buffer;
}

interface AttemptState {
  timedOut: boolean;
  tunnel: TunnelState;
}

const EMPTY = Buffer.alloc(0);
/** The body of an answer that is not a page is read to its end (not cut) up to this size. */
const DRAINED_BYTES = 64 * 1024;

/**
 * Sends one GET and does not follow redirects. Throws a FetchError, or the caller's abort
 * reason when `signal` aborts. `timeoutMs` bounds everything from name resolution to the
 * body's last byte.
 */
export async function sendAttempt(req: AttemptRequest): Promise<AttemptResponse> {
  req.signal?.throwIfAborted();
  const state: AttemptState = { timedOut: false, tunnel: { proxyFailure: undefined, tunnelOpen: false } };
  const controller = new AbortController();
  const timer = setTimeout(() => {
    state.timedOut = true;
    controller.abort(new Error(`no complete response within ${req.timeoutMs} ms`));
  }, req.timeoutMs);
  const onAbort = () => controller.abort(req.signal?.reason);
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const shared = req.proxyUrl ? undefined : req.connections;
  let own: Agents | undefined;
  try {
    if (!shared) own = await connectVia(req, state.tunnel, controller.signal);
    const agents = own ?? shared!.agents(req.policy, req.lookup);
    return await exchange(req, agents, controller.signal, shared !== undefined);
  } catch (error) {
    throw toFetchError(error, state, req);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
    own?.http.destroy();
    own?.https.destroy();
  }
}

/** Agents of this attempt alone: a proxy's tunnel, or a direct connection closed after it. */
async function connectVia(req: AttemptRequest, tunnel: TunnelState, signal: AbortSignal): Promise<Agents> {
  const guard = scraperGuard(req.policy, req.lookup);
  // Direct: the guard's agents check the host, every resolved address and the connected peer.
  if (!req.proxyUrl) return guard.agents({ keepAlive: false });
  // Behind a proxy the worker never connects to the target itself: the target is resolved and
  // checked here, and the proxy is asked to tunnel to exactly that address.
  const port = Number(req.url.port) || (req.url.protocol === 'https:' ? 443 : 80);
  const { address } = await abortable(guard.resolve(req.url.hostname, port), signal);
  return createProxyAgents(req.proxyUrl, address, tunnel);
}

async function exchange(
  req: AttemptRequest,
  agents: Agents,
  signal: AbortSignal,
  mayRetryStale: boolean,
): Promise<AttemptResponse> {
  const secure = req.url.protocol === 'https:';
  const request = (secure ? https : http).request(req.url, {
    agent: secure ? agents.https : agents.http,
    ...(secure && req.skipTlsVerification && { rejectUnauthorized: false }),
    signal,
    headers: { ...req.headers },
  });
  // Errors after the outcome is settled (a destroyed response, a late socket error) are moot.
  request.on('error', () => {});
  request.end();
  let response: http.IncomingMessage;
  try {
    [response] = (await once(request, 'response')) as [http.IncomingMessage];
  } catch (error) {
    // A kept-alive connection the server closed meanwhile: the GET never arrived, send it on a new one.
    if (mayRetryStale && request.reusedSocket && isStaleConnection(error) && !signal.aborted)
      return exchange(req, agents, signal, false);
    throw error;
  }
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    await drain(response).catch(() => {});
    return { status, headers: response.headers, body: EMPTY };
  }
  // A PDF may be larger than a page (docs/api.md §17).
  const maxBytes = isPdf(response.headers['content-type'])
    ? Math.max(req.maxBytes, MAX_PDF_BYTES)
    : req.maxBytes;
  const tooLarge = () =>
    new FetchError('HTTP_ERROR', `response body exceeds ${maxBytes} bytes`, {
      url: req.url.href,
      retryable: false,
      status,
    });
  if (Number(response.headers['content-length']) > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      response.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  try {
    const body = await decode(Buffer.concat(chunks, total), response.headers['content-encoding'], maxBytes);
    return { status, headers: response.headers, body };
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw error;
  }
}

/**
 * Reads the body of an answer that is not a page to its end, so that its connection stays open for
 * the next request (none for a 304, a few bytes for a redirect or an error page); past
 * DRAINED_BYTES the connection is cut instead.
 */
async function drain(response: http.IncomingMessage): Promise<void> {
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > DRAINED_BYTES) return void response.destroy();
  }
}

const isStaleConnection = (error: unknown) => {
  const code = errorCode(error);
  return code === 'ECONNRESET' || code === 'EPIPE';
};

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);
const zstd = promisify(zlib.zstdDecompress);

/**
 * The body decoded by its Content-Encoding, codings undone in reverse order of application, at
 * most `maxBytes` out (zlib throws ERR_BUFFER_TOO_LARGE past it, so a bomb stops there). A body
 * with a coding it does not know stays as sent; an empty body stays empty. Truncated streams give
 * what they hold, as browsers do.
 */
async function decode(body: Buffer, encoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const codings = (encoding ?? '')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.some((coding) => !CODINGS.has(coding))) return body;
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes };
  for (const coding of codings.reverse()) {
    if (body.length === 0) break;
    if (coding === 'br')
      body = await brotli(body, {
        finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
        maxOutputLength: maxBytes,
      });
    else if (coding === 'zstd') body = await zstd(body, { maxOutputLength: maxBytes });
    else if (coding === 'deflate') body = await (hasZlibHeader(body) ? inflate : inflateRaw)(body, flush);
    else body = await gunzip(body, flush);
  }
  return body;
}

/** The largest PDF a page may be (docs/api.md §17). */
const MAX_PDF_BYTES = 50 * 1024 * 1024;

const isPdf = (contentType: string | undefined) => /^\s*application\/pdf\b/i.test(contentType ?? '');

const CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'zstd']);

// RFC 1950: method 8 in the low nibble, and the two header bytes a multiple of 31. Some servers
// send "deflate" as a raw stream without it.
const hasZlibHeader = (body: Buffer) =>
  body.length >= 2 && (body[0]! & 0x0f) === 8 && ((body[0]! << 8) | body[1]!) % 31 === 0;

function toFetchError(error: unknown, state: AttemptState, req: AttemptRequest): unknown {
  if (req.signal?.aborted) return req.signal.reason;
  if (error instanceof FetchError) return error;
  const url = req.url.href;
  const blocked = blockedIn(error);
  if (blocked) return new FetchError('BLOCKED_TARGET', blocked.message, { url, retryable: false });
  const { proxyFailure, tunnelOpen } = state.tunnel;
  if (req.proxyUrl && (proxyFailure || (state.timedOut && !tunnelOpen))) {
    const reason = proxyFailure ? describe(proxyFailure) : `no tunnel within ${req.timeoutMs} ms`;
    // The proxy's address stays out of the message: it is operator configuration.
    return new FetchError('PROXY_ERROR', `proxy failed: ${reason}`, {
      url,
      retryable: true,
      cause: proxyFailure,
    });
  }
  if (state.timedOut) {
    return new FetchError('TIMEOUT', `no complete response within ${req.timeoutMs} ms`, {
      url,
      retryable: true,
    });
  }
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return new FetchError('NETWORK_ERROR', message, {
    url,
    retryable: !PERMANENT_NETWORK_CODES.has(code ?? ''),
    cause: error,
  });
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describe(error: Error): string {
  return errorCode(error) ?? error.message;
}

/** The guard's refusal behind a failed request: the error itself, its cause, or one of an AggregateError's. */
function blockedIn(error: unknown, depth = 0): BlockedTargetError | undefined {
  if (error instanceof BlockedTargetError) return error;
  if (!(error instanceof Error) || depth > 4) return undefined;
  const inner = error instanceof AggregateError ? error.errors : [error.cause];
  for (const each of inner) {
    const found = blockedIn(each, depth + 1);
    if (found) return found;
  }
  return undefined;
}
