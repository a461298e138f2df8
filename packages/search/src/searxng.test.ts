import { afterEach, describe, expect, it } from '@jest/globals';
import { type SearxngBehaviour, startSearxng } from '../../../test/support/searxng.ts';
import { SearchTimeoutError, SearchUnavailableError, SearxngClient, searchSettings } from './index.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function clientFor(behaviour: SearxngBehaviour) {
  const server = await startSearxng(behaviour);
  servers.push(server);
  const settings = searchSettings({ SEARXNG_ENDPOINT: `${server.endpoint}/`, SEARXNG_ENGINES: 'a,b' })!;
  return { server, client: new SearxngClient(settings) };
}

const query = { query: 'kettles', limit: 5, lang: null, country: null, tbs: null, timeoutMs: 5_000 };
const many = (n: number) => () =>
  Array.from({ length: n }, (_, i) => ({
    url: `https://example.com/${i}`,
    title: `T${i}`,
    content: `D${i}`,
  }));

describe('SearxngClient', () => {
  it('asks for JSON with the engines, language and time range, and answers url, title and description', async () => {
    const { server, client } = await clientFor({ kind: 'results', results: many(3) });
    const answer = await client.search({ ...query, lang: 'de', country: 'ch', tbs: 'qdr:w' });
    expect(answer).toEqual({
      results: [0, 1, 2].map((i) => ({
        url: `https://example.com/${i}`,
        title: `T${i}`,
        description: `D${i}`,
      })),
      warnings: [],
    });
    const params = server.requests[0]!;
    expect(Object.fromEntries(params)).toMatchObject({
      q: 'kettles',
      format: 'json',
      pageno: '1',
      language: 'de-CH',
      time_range: 'week',
      engines: 'a,b',
    });
  });

  it('reads pages until the limit, each URL once, leaving out URLs that are not http(s)', async () => {
    const { server, client } = await clientFor({
      kind: 'results',
      results: () => [
        ...many(12)(),
        { url: 'https://example.com/3', title: 'again', content: '' },
        { url: 'javascript:alert(1)', title: 'x', content: '' },
        ...many(30)().slice(12),
      ],
    });
    const answer = await client.search({ ...query, limit: 25 });
    expect(answer.results.map((r) => r.url)).toEqual(many(25)().map((r) => r.url));
    expect(server.requests.map((p) => p.get('pageno'))).toEqual(['1', '2', '3']);
  });

  it('warns about a tbs it cannot honour', async () => {
    const { client } = await clientFor({ kind: 'results', results: many(1) });
    expect((await client.search({ ...query, tbs: 'cdr:1,cd_min:1/1/2020' })).warnings).toEqual([
      'tbs "cdr:1,cd_min:1/1/2020" is not supported by the search engine and was ignored',
    ]);
  });

  it('is a 502 naming the fix when JSON output is disabled, and a 502 when the engine fails', async () => {
    const { client } = await clientFor({ kind: 'status', status: 403 });
    await expect(client.search(query)).rejects.toThrow(/enable "json" in search.formats/);
    const failing = await clientFor({ kind: 'status', status: 500 });
    const err = await failing.client.search(query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchUnavailableError);
    expect(err).toMatchObject({ status: 502, message: 'the search engine answered 500' });
  });

  it('is a 504 when the engine does not answer in time', async () => {
    const { client } = await clientFor({ kind: 'slow', delayMs: 5_000 });
    const err = await client.search({ ...query, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchTimeoutError);
    expect(err).toMatchObject({ status: 504, message: 'the search engine did not answer within 200 ms' });
  });

  it('is a 502 when nothing listens there', async () => {
    const { server, client } = await clientFor({ kind: 'results', results: many(1) });
    await server.close();
    servers.length = 0;
    await expect(client.search(query)).rejects.toThrow(/could not be reached/);
  });
});
