import { once } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { BlockedTargetError, OutboundGuard } from '@scrapejobs/outbound';
import got, { type Agents, RequestError } from 'got';
import type { AddressPolicy } from './address.ts';
import { abortable } from './backoff.ts';
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
}

export interface AttemptResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The decoded body of a 2xx answer; empty for any other status. */
  body: Buffer;
}

interface AttemptState {
  /** The guard's refusal, however the request then failed. */
  blocked: BlockedTargetError | undefined;
  timedOut: boolean;
  tunnel: TunnelState;
}

/**
 * Sends one GET and does not follow redirects. Throws a FetchError, or the caller's abort
 * reason when `signal` aborts. `timeoutMs` bounds everything from name resolution to the
 * body's last byte.
 */
export async function sendAttempt(req: AttemptRequest): Promise<AttemptResponse> {
  req.signal?.throwIfAborted();
  const state: AttemptState = {
    blocked: undefined,
    timedOut: false,
    tunnel: { proxyFailure: undefined, tunnelOpen: false },
  };
  const controller = new AbortController();
  const timer = setTimeout(() => {
    state.timedOut = true;
    controller.abort(new Error(`no complete response within ${req.timeoutMs} ms`));
  }, req.timeoutMs);
  const onAbort = () => controller.abort(req.signal?.reason);
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const guard = scraperGuard(req.policy, req.lookup, (error) => {
    state.blocked = error;
  });
  let agents: Agents | undefined;
  try {
    agents = await connectVia(req, guard, state.tunnel, controller.signal);
    return await exchange(req, agents, controller.signal);
  } catch (error) {
    throw toFetchError(error, state, req);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
    if (agents?.http) agents.http.destroy();
    if (agents?.https) agents.https.destroy();
  }
}

async function connectVia(
  req: AttemptRequest,
  guard: OutboundGuard,
  tunnel: TunnelState,
  signal: AbortSignal,
): Promise<Agents> {
  // Direct: the guard's agents check the host, every resolved address and the connected peer.
  if (!req.proxyUrl) return guard.agents({ keepAlive: false });
  // Behind a proxy the worker never connects to the target itself: the target is resolved and
  // checked here, and the proxy is asked to tunnel to exactly that address.
  const port = Number(req.url.port) || (req.url.protocol === 'https:' ? 443 : 80);
  const { address } = await abortable(guard.resolve(req.url.hostname, port), signal);
  return createProxyAgents(req.proxyUrl, address, tunnel);
}

async function exchange(req: AttemptRequest, agent: Agents, signal: AbortSignal): Promise<AttemptResponse> {
  const stream = got.stream(req.url, {
    agent,
    signal,
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    decompress: true,
    headers: { ...req.headers },
  });
  // Errors after the outcome is settled (a destroyed stream, a late socket error) are moot.
  stream.on('error', () => {});
  const [response] = (await once(stream, 'response')) as [IncomingMessage];
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    stream.destroy();
    return { status, headers: response.headers, body: Buffer.alloc(0) };
  }
  const tooLarge = () =>
    new FetchError('HTTP_ERROR', `response body exceeds ${req.maxBytes} bytes`, {
      url: req.url.href,
      retryable: false,
      status,
    });
  if (Number(response.headers['content-length']) > req.maxBytes) {
    stream.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > req.maxBytes) {
      stream.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return { status, headers: response.headers, body: Buffer.concat(chunks, total) };
}

function toFetchError(error: unknown, state: AttemptState, req: AttemptRequest): unknown {
  if (req.signal?.aborted) return req.signal.reason;
  if (error instanceof FetchError) return error;
  const url = req.url.href;
  if (state.blocked)
    return new FetchError('BLOCKED_TARGET', state.blocked.message, { url, retryable: false });
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
    // got's error holds the request options, the job's headers among them: keep only what it wraps.
    cause: error instanceof RequestError ? error.cause : error,
  });
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describe(error: Error): string {
  return errorCode(error) ?? error.message;
}
