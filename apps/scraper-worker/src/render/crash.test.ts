import { afterAll, beforeAll, expect, test } from '@jest/globals';
import {
  chromiumChildren,
  html,
  type LocalServer,
  listItems,
  startServer,
} from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { RenderError, Renderer } from './index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;

let server: LocalServer;
let renderer: Renderer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
    setTimeout(() => html(res, `<ul><li>${req.url}</li></ul>`), ms);
  });
  renderer = await Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await server?.close();
});

async function until(condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const render = (path: string) =>
  renderer.render({ url: `${server.origin}${path}`, waitStrategy: 'load', waitTimeoutMs: 10_000 });

test('renders in flight when Chromium is killed complete on the restarted browser, and so do later ones', async () => {
  expect(listItems((await render('/warm')).html)).toEqual(['/warm']);
  const [pid, ...others] = chromiumChildren();
  expect(pid).toBeDefined();
  expect(others).toEqual([]);

  const inFlight = [render('/slow-a?ms=1500'), render('/slow-b?ms=1500')];
  await until(() => renderer.stats().busy === 2);
  process.kill(pid as number, 'SIGKILL');

  const pages = await Promise.all(inFlight);
  expect(pages.map((p) => listItems(p.html))).toEqual([['/slow-a?ms=1500'], ['/slow-b?ms=1500']]);
  expect(listItems((await render('/after')).html)).toEqual(['/after']);
  expect(renderer.stats()).toEqual({ busy: 0, concurrency: 2, restarts: 1 });
  expect(chromiumChildren()).not.toContain(pid);
});

test('close() fails renders in flight with a retryable RENDER_ERROR and stops Chromium', async () => {
  const inFlight = render('/slow-c?ms=3000').catch((e: unknown) => e);
  await until(() => renderer.stats().busy === 1);
  const started = Date.now();
  await renderer.close();
  const failure = await inFlight;
  expect(failure).toBeInstanceOf(RenderError);
  expect(failure).toMatchObject({ code: 'RENDER_ERROR', retryable: true });
  expect(Date.now() - started).toBeLessThan(2_000);
  await expect(render('/after-close')).rejects.toMatchObject({ code: 'RENDER_ERROR' });
  await until(() => chromiumChildren().length === 0);
});

test('close() while the browser is being restarted after a crash leaves no Chromium behind', async () => {
  const restarting = await Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: true });
  const renderOn = (path: string) =>
    restarting
      .render({ url: `${server.origin}${path}`, waitStrategy: 'load', waitTimeoutMs: 10_000 })
      .catch((e: unknown) => e);
  await renderOn('/warm-2');
  const [pid] = chromiumChildren();
  const inFlight = renderOn('/slow-d?ms=1500');
  await until(() => restarting.stats().busy === 1);
  process.kill(pid as number, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 50)); // the crash is seen and the repair begins
  await restarting.close();
  await inFlight;
  await until(() => chromiumChildren().length === 0);
  // A repair that was still launching must not bring one back after close.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(chromiumChildren()).toEqual([]);
});
