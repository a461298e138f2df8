/**
 * The language model's path (docs/api.md §24) beside markdown alone: the real API and one scraper
 * worker, a local site of product pages, and a stand-in chat-completions server that answers at
 * once (so what is measured is this service's cost, not a model's), reporting the tokens of each
 * request and answer as o200k_base counts them. Each scenario is a job over the same pages
 * (`refetch: always`), run in turns; per page: the worker's CPU, the run's wall time, model calls
 * and tokens.
 *
 * Run: `pnpm exec node bench/model.ts [--pages 200] [--rounds 3] [--json-out FILE]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cutToTokens } from '@scrapejobs/llm';
import { readPage, startChatServer } from '../test/support/chat-server.ts';
import {
  apiClient,
  atCleanup,
  benchPrefix,
  cpuMsOf,
  createBenchDatabase,
  createKeyWithCli,
  log,
  machineInfo,
  parseOptions,
  printTable,
  round2,
  runBench,
  sleep,
  startApiAndWorker,
  writeJsonOut,
} from './support.ts';

const options = parseOptions({ pages: '200', rounds: '3', 'json-out': undefined });
const PAGES = Number(options.pages);
const ROUNDS = Number(options.rounds);

const tokens = (text: string) => cutToTokens(text, 10_000_000).tokens;

/** A product page of about 12 KB: a title and price, a description, and navigation around them. */
const productPage = (
  n: number,
) => `<!doctype html><html lang="en"><head><title>Product ${n}</title></head><body>
<header><nav>${Array.from({ length: 30 }, (_, i) => `<a href="/c/${i}">Category ${i}</a>`).join(' ')}</nav></header>
<main><article><h1>Kettle ${n}</h1><p>Title: Kettle ${n}</p><p>Price: ${10 + (n % 90)}</p>
${Array.from({ length: 12 }, (_, i) => `<p>Paragraph ${i} of the description of kettle ${n}: it boils water quickly, keeps it warm for an hour, and switches itself off when the water has boiled, so that nothing is left on by mistake.</p>`).join('\n')}
</article></main><footer>${Array.from({ length: 20 }, (_, i) => `<a href="/about/${i}">About ${i}</a>`).join(' ')}</footer></body></html>`;

const SCHEMA = { type: 'object', properties: { title: { type: 'string' }, price: { type: 'number' } } };

const SCENARIOS: Record<string, Record<string, unknown>> = {
  markdown: { formats: ['markdown'] },
  extract: { extract: { schema: SCHEMA } },
  'extract+summary': { formats: ['summary'], extract: { schema: SCHEMA } },
};

async function main(): Promise<boolean> {
  const model = await startChatServer((request) => {
    const content = readPage(request);
    const asked = request.body.messages.map((m) => m.content).join('\n');
    return { content, tokens: tokens(asked) + tokens(content) };
  });
  atCleanup(() => model.close());
  const site = createServer((req, res) => {
    const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? Number.NaN);
    if (!Number.isInteger(n)) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(productPage(n));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  atCleanup(() => new Promise((resolve) => site.close(resolve)));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  const databaseUrl = await createBenchDatabase('model');
  const prefix = benchPrefix('model');
  const modelEnv = { OPENAI_BASE_URL: model.baseUrl, MODEL_NAME: 'stand-in' };
  const { worker, base } = await startApiAndWorker({
    databaseUrl,
    prefix,
    logLevel: 'warn',
    api: modelEnv,
    worker: modelEnv,
  });
  const call = apiClient(base, await createKeyWithCli(databaseUrl, 'bench@example.com'));

  const jobs: Record<string, string> = {};
  for (const [name, fields] of Object.entries(SCENARIOS)) {
    const res = await call<{ job_id: string }>('POST', '/jobs', {
      name,
      source: `${siteUrl}/p/[1-${PAGES}]`,
      rate_limit: 6000,
      refetch: 'always',
      queries: [],
      ...fields,
    });
    if (res.status !== 201) throw new Error(`job ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    jobs[name] = res.body.job_id;
  }

  async function runOnce(name: string) {
    const jobId = jobs[name]!;
    const calls = model.requests.length;
    const cpu = cpuMsOf(worker.child.pid!) ?? 0;
    const started = performance.now();
    const run = await call<{ run_id: string }>('POST', `/jobs/${jobId}/run`);
    for (;;) {
      const r = await call<{ status: string; successful_urls: number; results_count: number }>(
        'GET',
        `/jobs/${jobId}/runs/${run.body.run_id}`,
      );
      if (r.body.status !== 'running') {
        if (r.body.successful_urls !== PAGES) throw new Error(`${name}: ${JSON.stringify(r.body)}`);
        break;
      }
      await sleep(50);
    }
    const wallMs = performance.now() - started;
    const requests = model.requests.slice(calls);
    const sent = requests.reduce((n, r) => n + tokens(r.body.messages.map((m) => m.content).join('\n')), 0);
    const answered = requests.reduce((n, r) => n + tokens(readPage(r)), 0);
    return {
      wallMs,
      cpuMs: (cpuMsOf(worker.child.pid!) ?? 0) - cpu,
      calls: requests.length,
      tokensIn: sent,
      tokensOut: answered,
    };
  }

  // A warm-up of each, then rounds in turns (the first of each round rotates).
  for (const name of Object.keys(SCENARIOS)) await runOnce(name);
  const samples: Record<string, Awaited<ReturnType<typeof runOnce>>[]> = {};
  const names = Object.keys(SCENARIOS);
  for (let round = 0; round < ROUNDS; round++)
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      log(`round ${round + 1}: ${name}`);
      const sample = await runOnce(name);
      samples[name] = [...(samples[name] ?? []), sample];
    }

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const base0 = mean(samples.markdown!.map((s) => s.cpuMs));
  const rows = names.map((name) => {
    const s = samples[name]!;
    const cpu = mean(s.map((x) => x.cpuMs));
    return {
      scenario: name,
      'pages/s': round2(PAGES / (mean(s.map((x) => x.wallMs)) / 1000)),
      'worker CPU ms/page': round2(cpu / PAGES),
      'CPU vs markdown': `${round2(cpu / base0)}x`,
      'model calls/page': round2(mean(s.map((x) => x.calls)) / PAGES),
      'tokens in/page': Math.round(mean(s.map((x) => x.tokensIn)) / PAGES),
      'tokens out/page': Math.round(mean(s.map((x) => x.tokensOut)) / PAGES),
    };
  });
  const summary = {
    pages: PAGES,
    rounds: ROUNDS,
    rows,
    machine: machineInfo('stand-in model answers at once'),
  };
  console.log(JSON.stringify(summary, null, 2));
  const header = Object.keys(rows[0]!);
  printTable(
    header,
    `l${'r'.repeat(header.length - 1)}`,
    rows.map((row) => Object.values(row)),
  );
  writeJsonOut(options['json-out'], summary);
  return true;
}

await runBench(main);
