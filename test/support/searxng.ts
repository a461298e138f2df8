import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in does: answer results, fail with a status, or answer late. */
export type SearxngBehaviour =
  | { kind: 'results'; results: (query: string) => { url: string; title: string; content: string }[] }
  | { kind: 'status'; status: number }
  | { kind: 'slow'; delayMs: number };

/**
 * A local stand-in for a SearXNG instance (the outside world): `GET /search?format=json` answers
 * its results ten a page, as SearXNG does; any other format is a 403, as with JSON output disabled.
 */
export async function startSearxng(behaviour: SearxngBehaviour) {
  const requests: URLSearchParams[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://searxng');
    if (url.pathname !== '/search') return res.writeHead(404).end();
    requests.push(url.searchParams);
    if (url.searchParams.get('format') !== 'json') return res.writeHead(403).end('Forbidden');
    if (behaviour.kind === 'status') return res.writeHead(behaviour.status).end('error');
    if (behaviour.kind === 'slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"results":[]}');
      }, behaviour.delayMs);
      timers.add(timer);
      return;
    }
    const page = Number(url.searchParams.get('pageno') ?? '1');
    const all = behaviour.results(url.searchParams.get('q') ?? '');
    const results = all.slice((page - 1) * 10, page * 10).map((r) => ({ ...r, engine: 'stand-in' }));
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ query: url.searchParams.get('q'), number_of_results: all.length, results }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
