/**
 * Rendering against Crawlee's PuppeteerCrawler in one sitting (docs/api.md §23's target: ≥ 2×):
 * the same pages (bench/render-site.ts, served by a thread of this process), the same Chromium build and the
 * same concurrency. Each side runs in a child process of its own, in turns, a round at a time (the
 * first of each round rotates): `ours` and `ours-lean` are bench/render.ts (the worker's Renderer,
 * every page checked, on its Chromium headless shell) with the worker's production Node flags;
 * `crawlee-default` and `crawlee-lean` are bench/render-crawlee.ts on the full Chromium (Crawlee's
 * kind of browser), `crawlee-shell` the same on the headless shell. While a side runs, its process and its Chromium processes are sampled
 * every 250 ms: the peak RSS of the Node process, and the peak of the Chromium processes' summed
 * RSS and PSS (PSS shares the pages processes share, so it is the fairer sum).
 *
 * Run: `pnpm exec node bench/render-vs-crawlee.ts [--pages 300]
 * [--rounds 2] [--concurrency 2] [--js-every 0] [--sides ours,ours-lean,crawlee-default,crawlee-lean,crawlee-shell]`
 * (`ours-lean`: with render_config.block_resources, the default of a job that keeps records only;
 * `puppeteer`, not run unless named: bench/render-puppeteer.ts, a bare puppeteer loop, what
 * Chromium itself allows on these pages at this concurrency)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  log,
  machineInfo,
  parseOptions,
  printTable,
  productionNodeFlags,
  ROOT,
  round2,
  runBench,
  stopChild,
  tempDir,
  track,
  waitForQuiet,
} from './support.ts';

const args = parseOptions({
  pages: '300',
  rounds: '2',
  concurrency: '2',
  'js-every': '0',
  sides: 'ours,ours-lean,crawlee-default,crawlee-lean,crawlee-shell',
});
const SIDES = args.sides.split(',').filter(Boolean);
/** The pages each side renders before it is timed (as bench/render.ts and bench/render-crawlee.ts do). */
const WARMUP_PAGES = 6;

interface ProcInfo {
  ppid: number;
  comm: string;
}

function processes(): Map<number, ProcInfo> {
  const out = new Map<number, ProcInfo>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.set(Number(entry), { ppid, comm });
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Every descendant of `root`. */
function descendants(root: number, all: Map<number, ProcInfo>): number[] {
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const [pid, p] of all) if (frontier.includes(p.ppid)) next.push(pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** RSS and PSS of a process in MiB (0 once it has ended). */
function memory(pid: number): { rss: number; pss: number } {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(rollup.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
    return { rss: kb('Rss') / 1024, pss: kb('Pss') / 1024 };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/** Samples a side's Node process and its browser's processes until stopped; keeps the peaks. */
function sampleTree(pid: number) {
  const peak = { node_rss: 0, browser_rss: 0, browser_pss: 0, browser_processes: 0 };
  const sample = () => {
    const all = processes();
    const browser = descendants(pid, all).filter((p) => all.get(p)?.comm.startsWith('chrom'));
    let rss = 0;
    let pss = 0;
    for (const p of browser) {
      const m = memory(p);
      rss += m.rss;
      pss += m.pss;
    }
    // The side's Node process is the only child of the bash that times it.
    const node = [...all].find(([, p]) => p.ppid === pid)?.[0];
    if (node) peak.node_rss = Math.max(peak.node_rss, memory(node).rss);
    peak.browser_rss = Math.max(peak.browser_rss, rss);
    peak.browser_pss = Math.max(peak.browser_pss, pss);
    peak.browser_processes = Math.max(peak.browser_processes, browser.length);
  };
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      return Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, round2(v)])) as typeof peak;
    },
  };
}

interface Run {
  side: string;
  round: number;
  pages: number;
  errors: number;
  pagesPerMinute: number;
  p50: number;
  p95: number;
  cpuMsPerPage: number;
  memory: ReturnType<ReturnType<typeof sampleTree>['stop']>;
}

async function runSide(side: string, round: number, origin: string, dir: string): Promise<Run> {
  const logFile = join(dir, `${side}-${round}.log`);
  const common = [args.pages, args.concurrency, args['js-every']];
  const argv = side.startsWith('ours')
    ? [
        ...productionNodeFlags('scraper-worker'),
        'bench/render.ts',
        '--origin',
        origin,
        '--pages',
        args.pages,
        '--concurrency',
        args.concurrency,
        '--js-every',
        args['js-every'],
        ...(side === 'ours-lean' ? ['--block-resources'] : []),
      ]
    : side === 'puppeteer'
      ? ['bench/render-puppeteer.ts', origin, args.pages, args.concurrency]
      : ['bench/render-crawlee.ts', origin, ...common, side.replace('crawlee-', '')];
  // bash's `time` gives the CPU of the side's whole process tree, its browser's reaped processes too.
  const out = openSync(logFile, 'w');
  const child = track(
    spawn('bash', ['-c', 'TIMEFORMAT="CPU %U %S"; time "$0" "$@"', process.execPath, ...argv], {
      cwd: ROOT,
      env: {
        ...process.env,
        CRAWLEE_PERSIST_STORAGE: 'false',
        CRAWLEE_STORAGE_DIR: join(dir, `storage-${side}-${round}`),
      },
      stdio: ['ignore', out, out],
    }),
  );
  closeSync(out);
  const sampler = sampleTree(child.pid as number);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const mem = sampler.stop();
  await stopChild(child);
  const output = readFileSync(logFile, 'utf8').split('\n');
  const line = output.find((l) => l.startsWith('RESULT '));
  const cpu =
    output
      .find((l) => l.startsWith('CPU '))
      ?.split(' ')
      .slice(1)
      .map(Number) ?? [];
  if (!line)
    throw new Error(
      `${side} ended (${code}) without a result:\n${readFileSync(logFile, 'utf8').slice(-3000)}`,
    );
  const r = JSON.parse(line.slice('RESULT '.length));
  return {
    side,
    round,
    pages: r.pages,
    errors: r.errors,
    pagesPerMinute: r.pagesPerMinute,
    p50: r.msPerRender.p50,
    p95: r.msPerRender.p95,
    // The whole run's, Chromium's start and the warm-up pages included.
    cpuMsPerPage: Math.round((((cpu[0] ?? 0) + (cpu[1] ?? 0)) * 1000) / (r.pages + WARMUP_PAGES)),
    memory: mem,
  };
}

await runBench(async () => {
  // The site answers from a thread of its own, apart from this thread's sampling.
  const site = new Worker(new URL('./render-site-thread.ts', import.meta.url), {
    workerData: { jsEvery: args['js-every'] },
  });
  const [origin] = (await once(site, 'message')) as [string];
  const dir = tempDir('render-vs-crawlee');
  const runs: Run[] = [];
  try {
    for (let round = 1; round <= Number(args.rounds); round++) {
      const order = [
        ...SIDES.slice((round - 1) % SIDES.length),
        ...SIDES.slice(0, (round - 1) % SIDES.length),
      ];
      for (const side of order) {
        await waitForQuiet(0.5, 30_000);
        log(`round ${round}: ${side}`);
        const run = await runSide(side, round, origin, dir);
        log(`  ${run.pagesPerMinute} pages/min, ${run.errors} errors`);
        runs.push(run);
      }
    }
  } finally {
    await site.terminate();
  }
  // Each of our sides against each of Crawlee's, round by round.
  const ratios: Record<string, number[]> = {};
  for (const mine of SIDES.filter((s) => s.startsWith('ours') || s === 'puppeteer')) {
    const ours = runs.filter((r) => r.side === mine);
    for (const theirs of SIDES.filter((s) => s.startsWith('crawlee'))) {
      const other = runs.filter((r) => r.side === theirs);
      ratios[`${mine} / ${theirs}`] = ours.map((o, i) =>
        round2(o.pagesPerMinute / (other[i]?.pagesPerMinute ?? Number.NaN)),
      );
    }
  }
  console.log(JSON.stringify({ machine: machineInfo('render vs Crawlee'), args, runs, ratios }, null, 2));
  printTable(
    [
      'side',
      'round',
      'pages/min',
      'errors',
      'p50 ms',
      'p95 ms',
      'CPU ms/page',
      'node RSS MiB',
      'browser RSS MiB',
      'browser PSS MiB',
    ],
    'lrrrrrrrrr',
    runs.map((r) => [
      r.side,
      r.round,
      r.pagesPerMinute,
      r.errors,
      r.p50,
      r.p95,
      r.cpuMsPerPage,
      r.memory.node_rss,
      r.memory.browser_rss,
      r.memory.browser_pss,
    ]),
  );
  console.log(`\npages/min ratios, by round: ${JSON.stringify(ratios)}`);
  return runs.every((r) => r.errors === 0);
});
