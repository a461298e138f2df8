import { UNSUPPORTED_ENDPOINTS, unsupportedMessage } from './endpoints.ts';

/** The endpoints of docs/api.md §18 this service answers: none may be in the 501 list. */
const SUPPORTED = [
  'post /scrape',
  'post /crawl',
  'get /crawl/:id',
  'delete /crawl/:id',
  'get /crawl/:id/errors',
  'get /crawl/active',
  'post /map',
  'post /batch/scrape',
  'get /batch/scrape/:id',
  'delete /batch/scrape/:id',
  'get /batch/scrape/:id/errors',
  'post /search',
  'post /extract',
  'get /extract/:id',
  'get /team/token-usage',
].flatMap((e) => {
  const [method, path] = e.split(' ');
  return [`${method} /v1${path}`, `${method} /v2${path}`];
});

/** Whether an Express path (`:param` segments) would answer a request path. */
const matches = (pattern: string, path: string) =>
  new RegExp(`^${pattern.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(path);

describe('UNSUPPORTED_ENDPOINTS', () => {
  it('lists each method and path once, in Express syntax under /v1 or /v2', () => {
    const keys = UNSUPPORTED_ENDPOINTS.map((e) => `${e.method} ${e.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const { path } of UNSUPPORTED_ENDPOINTS) expect(path).toMatch(/^\/v[12](\/(:[A-Za-z]+|[a-z-]+))+$/);
  });

  it('has the endpoints of agent, research, browser and llmstxt, in both versions where Firecrawl has them', () => {
    const keys = new Set(UNSUPPORTED_ENDPOINTS.map((e) => `${e.method} ${e.path}`));
    for (const key of [
      'post /v2/agent',
      'get /v2/agent/:id',
      'post /v1/deep-research',
      'get /v1/deep-research/:id',
      'post /v1/llmstxt',
      'get /v1/llmstxt/:id',
      'post /v2/browser',
      'get /v2/search/research/papers',
    ])
      expect(keys).toContain(key);
  });

  it('never shadows an endpoint this service answers', () => {
    for (const endpoint of UNSUPPORTED_ENDPOINTS)
      for (const supported of SUPPORTED) {
        const [method, path] = supported.split(' ') as [string, string];
        const concrete = path.replace(/:id/g, 'abc');
        expect([
          endpoint.path,
          supported,
          method === endpoint.method && matches(endpoint.path, concrete),
        ]).toEqual([endpoint.path, supported, false]);
      }
  });

  it('names the feature in the 501 message', () => {
    expect(unsupportedMessage({ feature: 'search' })).toBe('search is not supported by this service');
  });
});
