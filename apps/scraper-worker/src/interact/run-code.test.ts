import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { html, type LocalServer, startServer } from '../../../../test/support/render-servers.ts';
import { Renderer, type SessionPage } from '../render/index.ts';
import { type CodeLimits, PageChannel, runCode } from './run-code.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
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

/** A session page on the local site's start page, with its channel. */
async function session(): Promise<SessionPage & { channel: PageChannel }> {
  const opened = await renderer.openSession({
    url: `${server.origin}/`,
    waitStrategy: 'load',
    waitTimeoutMs: 10_000,
  });
  return { ...opened, channel: await PageChannel.attach(opened.page, 10_000) };
}

describe('code run in an interact session page', () => {
  test('the page helper clicks and fills, console output is stdout and stderr, and the return value is the result', async () => {
    const s = await session();
    try {
      const run = await runCode(
        s.page,
        s.channel,
        `await page.click('#more'); await page.click('#more');
         await page.fill('#name', 'Ada');
         console.log('count', await page.innerText('#count'));
         console.warn({ title: await page.title() });
         return { count: Number(document.getElementById('count').textContent), url: await page.url() };`,
        LIMITS,
      );
      expect(run).toEqual({
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
      const again = await runCode(s.page, s.channel, `return page.textContent('#count');`, LIMITS);
      expect([again.result, again.stdout]).toEqual(['2', '']);
    } finally {
      s.close();
    }
  });

  test('a thrown error is exit code 1 with the error in stderr; a syntax error too', async () => {
    const s = await session();
    try {
      const thrown = await runCode(
        s.page,
        s.channel,
        `console.log('before'); throw new Error('nope');`,
        LIMITS,
      );
      expect([thrown.exitCode, thrown.stdout, thrown.error]).toEqual([
        1,
        'before\n',
        expect.stringMatching(/^Error: nope/),
      ]);
      expect(thrown.stderr).toMatch(/^Error: nope/);
      const syntax = await runCode(s.page, s.channel, `return (;`, LIMITS);
      expect([syntax.exitCode, syntax.error]).toEqual([1, expect.stringMatching(/SyntaxError/)]);
      const missing = await runCode(
        s.page,
        s.channel,
        `await page.click('#absent', { timeout: 100 });`,
        LIMITS,
      );
      expect(missing.error).toMatch(/no element matched #absent within 100 ms/);
    } finally {
      s.close();
    }
  });

  test('code past its time limit is stopped, a loop that never yields too, and the page still serves the next call', async () => {
    const s = await session();
    try {
      const limits = { ...LIMITS, timeoutMs: 300 };
      const hung = await runCode(
        s.page,
        s.channel,
        `console.log('waiting'); await new Promise(() => {});`,
        limits,
      );
      expect([hung.killed, hung.exitCode, hung.stdout]).toEqual([true, 124, 'waiting\n']);
      const started = Date.now();
      const loop = await runCode(s.page, s.channel, `while (true) {}`, limits);
      expect([loop.killed, loop.exitCode]).toEqual([true, 124]);
      expect(Date.now() - started).toBeLessThan(3_000);
      const after = await runCode(s.page, s.channel, `return page.innerText('#title');`, LIMITS);
      expect([after.exitCode, after.result]).toEqual([0, 'Start']);
    } finally {
      s.close();
    }
  });

  test('output and result are cut at their bounds, and marked truncated', async () => {
    const s = await session();
    try {
      const run = await runCode(
        s.page,
        s.channel,
        `for (let i = 0; i < 10000; i++) console.log('line ' + i); return 'x'.repeat(100000);`,
        LIMITS,
      );
      expect([run.stdout.length, run.result?.length, run.truncated, run.exitCode]).toEqual([
        1_000,
        200,
        true,
        0,
      ]);
      expect(run.stdout.startsWith('line 0\nline 1\n')).toBe(true);
    } finally {
      s.close();
    }
  });

  test('a navigation the code starts ends the call, and the next call runs on the new document', async () => {
    const s = await session();
    try {
      const nav = await runCode(
        s.page,
        s.channel,
        `console.log('leaving'); await page.click('#go'); await page.waitForTimeout(5000);`,
        LIMITS,
      );
      expect([nav.exitCode, nav.killed, nav.url]).toEqual([0, false, `${server.origin}/next`]);
      const next = await runCode(
        s.page,
        s.channel,
        `console.log(await page.innerText('#title')); return page.url();`,
        LIMITS,
      );
      expect([next.stdout, next.result]).toEqual(['Next page\n', `${server.origin}/next`]);
    } finally {
      s.close();
    }
  });
});
