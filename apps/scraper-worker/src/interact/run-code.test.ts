import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { InteractRun } from '@scrapejobs/queues';
import { html, type LocalServer, startServer } from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { Renderer } from '../render/index.ts';
import { type CodeLimits, PageChannel, runCode } from './run-code.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const LIMITS: CodeLimits = { timeoutMs: 5_000, maxOutput: 1_000, maxResult: 200 };

let renderer: Renderer;
let server: LocalServer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/next') return void html(res, '<h1 id="title">Next page</h1>');
    html(
      res,
      `<h1 id="title">Start</h1><p id="count">0</p>
      <button id="more" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">more</button>
      <input id="name"><a id="go" href="/next">next</a>
      <script>document.getElementById('name').addEventListener('input', (e) => { document.title = 'typed ' + e.target.value; });</script>`,
    );
  });
  renderer = await Renderer.start({ concurrency: 1, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await server?.close();
});

type Run = (code: string, limits?: Partial<CodeLimits>) => Promise<InteractRun>;

/** Gives `use` a way to run code in a session page on the local site's start page, then closes it. */
async function inSession(use: (run: Run) => Promise<void>): Promise<void> {
  const opened = await renderer.openSession({
    url: `${server.origin}/`,
    waitStrategy: 'load',
    waitTimeoutMs: 10_000,
  });
  try {
    const channel = await PageChannel.attach(opened.page, 10_000);
    await use((code, limits) => runCode(opened.page, channel, code, { ...LIMITS, ...limits }));
  } finally {
    opened.close();
  }
}

describe('code run in an interact session page', () => {
  test('the page helper clicks and fills, console output is stdout and stderr, and the return value is the result', async () => {
    await inSession(async (run) => {
      const got = await run(`await page.click('#more'); await page.click('#more');
         await page.fill('#name', 'Ada');
         console.log('count', await page.innerText('#count'));
         console.warn({ title: await page.title() });
         return { count: Number(document.getElementById('count').textContent), url: await page.url() };`);
      expect(got).toEqual({
        kind: 'ran',
        stdout: 'count 2\n',
        stderr: '{"title":"typed Ada"}\n',
        result: JSON.stringify({ count: 2, url: `${server.origin}/` }),
        exitCode: 0,
        killed: false,
        truncated: false,
        error: null,
        url: `${server.origin}/`,
      });
      // The page keeps its state for the next call.
      const again = await run(`return page.textContent('#count');`);
      expect([again.result, again.stdout]).toEqual(['2', '']);
    });
  });

  test('a thrown error is exit code 1 with the error in stderr; a syntax error too', async () => {
    await inSession(async (run) => {
      const thrown = await run(`console.log('before'); throw new Error('nope');`);
      expect([thrown.exitCode, thrown.stdout, thrown.error]).toEqual([
        1,
        'before\n',
        expect.stringMatching(/^Error: nope/),
      ]);
      expect(thrown.stderr).toMatch(/^Error: nope/);
      const syntax = await run(`return (;`);
      expect([syntax.exitCode, syntax.error]).toEqual([1, expect.stringMatching(/SyntaxError/)]);
      const missing = await run(`await page.click('#absent', { timeout: 100 });`);
      expect(missing.error).toMatch(/no element matched #absent within 100 ms/);
    });
  });

  test('code past its time limit is stopped, a loop that never yields too, and the page still serves the next call', async () => {
    await inSession(async (run) => {
      const limits = { timeoutMs: 300 };
      const hung = await run(`console.log('waiting'); await new Promise(() => {});`, limits);
      expect([hung.killed, hung.exitCode, hung.stdout]).toEqual([true, 124, 'waiting\n']);
      const started = Date.now();
      const loop = await run(`while (true) {}`, limits);
      expect([loop.killed, loop.exitCode]).toEqual([true, 124]);
      expect(Date.now() - started).toBeLessThan(3_000);
      const after = await run(`return page.innerText('#title');`);
      expect([after.exitCode, after.result]).toEqual([0, 'Start']);
    });
  });

  test('output and result are cut at their bounds, and marked truncated', async () => {
    await inSession(async (run) => {
      const got = await run(
        `for (let i = 0; i < 10000; i++) console.log('line ' + i); return 'x'.repeat(100000);`,
      );
      expect([got.stdout.length, got.result?.length, got.truncated, got.exitCode]).toEqual([
        1_000,
        200,
        true,
        0,
      ]);
      expect(got.stdout.startsWith('line 0\nline 1\n')).toBe(true);
    });
  });

  test('a navigation the code starts ends the call, and the next call runs on the new document', async () => {
    await inSession(async (run) => {
      const nav = await run(
        `console.log('leaving'); await page.click('#go'); await page.waitForTimeout(5000);`,
      );
      expect([nav.exitCode, nav.killed, nav.url]).toEqual([0, false, `${server.origin}/next`]);
      const next = await run(`console.log(await page.innerText('#title')); return page.url();`);
      expect([next.stdout, next.result]).toEqual(['Next page\n', `${server.origin}/next`]);
    });
  });
});
