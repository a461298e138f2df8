export interface UnsupportedEndpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express path, e.g. `/v1/extract/:id`. */
  path: string;
  /** What the 501 names: `${feature} is not supported by this service`. */
  feature: string;
}

const both = (
  method: UnsupportedEndpoint['method'],
  path: string,
  feature: string,
): UnsupportedEndpoint[] => [
  { method, path: `/v1${path}`, feature },
  { method, path: `/v2${path}`, feature },
];

/**
 * Firecrawl endpoints (v1 and v2, as the official SDKs call them) this service answers with
 * 501. Static paths come before parameterised ones of the same prefix.
 */
export const UNSUPPORTED_ENDPOINTS: readonly UnsupportedEndpoint[] = [
  { method: 'post', path: '/v2/search/developer', feature: 'search' },
  { method: 'get', path: '/v2/search/research/papers', feature: 'research' },
  { method: 'get', path: '/v2/search/research/papers/:id', feature: 'research' },
  { method: 'get', path: '/v2/search/research/papers/:id/similar', feature: 'research' },
  { method: 'get', path: '/v2/search/research/github', feature: 'research' },
  { method: 'post', path: '/v2/search/:id/feedback', feature: 'search' },
  ...both('post', '/deep-research', 'deep research'),
  ...both('get', '/deep-research/:id', 'deep research'),
  ...both('post', '/llmstxt', 'llmstxt'),
  ...both('get', '/llmstxt/:id', 'llmstxt'),
  { method: 'post', path: '/v2/agent', feature: 'agent' },
  { method: 'get', path: '/v2/agent', feature: 'agent' },
  { method: 'get', path: '/v2/agent/threads/:threadId', feature: 'agent' },
  { method: 'get', path: '/v2/agent/:id', feature: 'agent' },
  { method: 'delete', path: '/v2/agent/:id', feature: 'agent' },
  { method: 'get', path: '/v2/agent/:id/trace', feature: 'agent' },
  { method: 'get', path: '/v2/agent/:id/snapshots/:snapshotId', feature: 'agent' },
  { method: 'post', path: '/v2/browser', feature: 'browser' },
  { method: 'get', path: '/v2/browser', feature: 'browser' },
  { method: 'get', path: '/v2/browser/:id', feature: 'browser' },
  { method: 'delete', path: '/v2/browser/:id', feature: 'browser' },
  { method: 'post', path: '/v2/browser/:id/execute', feature: 'browser' },
  { method: 'post', path: '/v2/crawl/params-preview', feature: 'crawl params preview' },
  { method: 'post', path: '/v2/monitor', feature: 'monitor' },
  { method: 'get', path: '/v2/monitor', feature: 'monitor' },
  { method: 'get', path: '/v2/monitor/:id', feature: 'monitor' },
  { method: 'patch', path: '/v2/monitor/:id', feature: 'monitor' },
  { method: 'delete', path: '/v2/monitor/:id', feature: 'monitor' },
  { method: 'post', path: '/v2/monitor/:id/run', feature: 'monitor' },
  { method: 'get', path: '/v2/monitor/:id/checks', feature: 'monitor' },
  { method: 'get', path: '/v2/monitor/:id/checks/:checkId', feature: 'monitor' },
  { method: 'post', path: '/v2/feedback', feature: 'feedback' },
  ...both('get', '/team/credit-usage/historical', 'team usage'),
  ...both('get', '/team/token-usage/historical', 'team usage'),
  { method: 'get', path: '/v2/concurrency-check', feature: 'team usage' },
];

/** The 501 message of an unsupported endpoint. */
export const unsupportedMessage = (endpoint: Pick<UnsupportedEndpoint, 'feature'>): string =>
  `${endpoint.feature} is not supported by this service`;
