import http, { type ClientRequest } from 'node:http';
import https from 'node:https';
import { RenderError } from './errors.ts';

/** An upstream forward proxy that the local safety proxy chains to (a job's proxy_config). */
export interface Upstream {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  /** `Basic …` from the URL's user info, or null. */
  authorization: string | null;
}

/** Parses `http(s)://[user:pass@]host:port`; anything else is a PROXY_ERROR that no retry fixes. */
export function parseUpstream(proxyUrl: string): Upstream {
  let url: URL;
  try {
    url = new URL(proxyUrl);
  } catch {
    throw new RenderError('PROXY_ERROR', 'The proxy URL is not a valid URL.', { retryable: false });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RenderError('PROXY_ERROR', `Unsupported proxy protocol ${url.protocol}`, { retryable: false });
  }
  const credentials =
    url.username || url.password
      ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      : null;
  return {
    protocol: url.protocol,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    authorization: credentials === null ? null : `Basic ${Buffer.from(credentials).toString('base64')}`,
  };
}

/** A request to the upstream proxy itself: an absolute-form request or a CONNECT. */
export function upstreamRequest(
  up: Upstream,
  method: string,
  path: string,
  headers: string[],
): ClientRequest {
  const all = up.authorization ? [...headers, 'Proxy-Authorization', up.authorization] : headers;
  const options = { host: up.host, port: up.port, method, path, headers: all, agent: false as const };
  return up.protocol === 'https:' ? https.request(options) : http.request(options);
}
