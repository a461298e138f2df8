// render_config.actions against local pages that load more on a click, filter on Enter, grow on
// scroll and add content late.

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RenderAction } from '@scrapejobs/contracts';
import {
  html,
  type LocalServer,
  listItems,
  renderFailure,
  startServer,
} from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { RenderError, Renderer } from './index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;

const ADD = `function add(items) { for (const t of items) { const li = document.createElement('li'); li.textContent = t; document.getElementById('list').append(li); } }`;

function json(res: ServerResponse, body: unknown, ms: number): void {
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  }, ms);
}

function site(path: string, query: URLSearchParams, res: ServerResponse): void {
  switch (path) {
    case '/more': // each click fetches the next three items
      return void html(
        res,
        `<ul id="list"><li>item 1</li><li>item 2</li><li>item 3</li></ul><button id="more">Load more</button>
        <script>${ADD}
          let page = 1;
          document.getElementById('more').addEventListener('click', async () => {
            page += 1;
            add(await (await fetch('/items?page=' + page)).json());
          });</script>`,
      );
    case '/items': {
      const page = Number(query.get('page'));
      return void json(
        res,
        [1, 2, 3].map((i) => `item ${(page - 1) * 3 + i}`),
        300,
      );
    }
    case '/search': // filters the list by script when Enter is pressed in the box
      return void html(
        res,
        `<input id="q"><ul id="list"><li>apple</li><li>banana</li><li>cherry</li></ul>
        <script>
          document.getElementById('q').addEventListener('keydown', (e) => {
            if (e.key !== 'Enter') return;
            for (const li of [...document.querySelectorAll('#list li')]) if (!li.textContent.includes(e.target.value)) li.remove();
          });</script>`,
      );
    case '/infinite': // tall items; reaching the bottom fetches ten more
      return void html(
        res,
        `<style>li { height: 100px; }</style><ul id="list"></ul>
        <script>${ADD}
          add(Array.from({ length: 10 }, (_, i) => 'row ' + (i + 1)));
          let loading = false;
          addEventListener('scroll', async () => {
            if (loading || innerHeight + scrollY < document.body.scrollHeight - 50) return;
            loading = true;
            const from = document.querySelectorAll('#list li').length;
            add(await (await fetch('/rows?from=' + from)).json());
            loading = false;
          });</script>`,
      );
    case '/rows': {
      const from = Number(query.get('from'));
      return void json(
        res,
        Array.from({ length: 10 }, (_, i) => `row ${from + i + 1}`),
        250,
      );
    }
    case '/late': // content that a timer adds well after "load"
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}
          setTimeout(() => { add(['late one']); document.body.insertAdjacentHTML('beforeend', '<p id="done">done</p>'); }, 700);</script>`,
      );
    case '/form': // a real form: submitting navigates to /results
      return void html(
        res,
        `<form action="/results" method="get"><input id="q" name="q"><button id="go" type="submit">Go</button></form>`,
      );
    case '/results': // the result arrives on "load", which a slow image holds past the settling time
      return void html(
        res,
        `<ul id="list"></ul><img src="/slow.gif"><script>${ADD}
          addEventListener('load', () => add(['result for ' + new URLSearchParams(location.search).get('q')]));</script>`,
      );
    case '/slow.gif':
      return void setTimeout(() => res.writeHead(200, { 'content-type': 'image/gif' }).end(), 2_500);
    case '/links':
      return void html(res, '<a id="gone" href="/gone">gone</a>');
    case '/toggles': // each button adds its own item when clicked
      return void html(
        res,
        `<ul id="list"></ul><button class="t">a</button><button class="t">b</button><button class="t">c</button>
        <script>${ADD}
          for (const b of document.querySelectorAll('.t')) b.addEventListener('click', () => add(['clicked ' + b.textContent]));</script>`,
      );
    case '/pane': // a scrolling pane that loads more when scrolled to its bottom
      return void html(
        res,
        `<style>#pane { height: 100px; overflow: auto; } li { height: 60px; }</style><div id="pane"><ul id="list"></ul></div>
        <script>${ADD}
          add(['p1', 'p2', 'p3']);
          const pane = document.getElementById('pane');
          pane.addEventListener('scroll', () => { if (pane.scrollTop > 0 && document.querySelectorAll('#list li').length === 3) add(['p4']); });</script>`,
      );
    default:
      return void html(res, 'not found', 404);
  }
}

let server: LocalServer;
let forbidden: LocalServer;
let renderer: Renderer;

beforeAll(async () => {
  forbidden = await startServer((_req, res) => html(res, '<p>forbidden</p>'));
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/away') {
      return void html(res, `<a id="away" href="http://127.0.0.1:${forbidden.port}/secret">away</a>`);
    }
    site(url.pathname, url.searchParams, res);
  });
  renderer = await Renderer.start({
    concurrency: 2,
    executablePath: CHROMIUM,
    allowPrivate: false,
    isAllowedAddress: (_ip, port) => port === server.port,
  });
});

afterAll(async () => {
  await renderer?.close();
  await Promise.all([server?.close(), forbidden?.close()]);
});

const render = (path: string, actions: RenderAction[], waitTimeoutMs = 10_000) =>
  renderer.render({ url: `${server.origin}${path}`, waitStrategy: 'load', waitTimeoutMs, actions });

const failureOf = (promise: Promise<unknown>) => renderFailure(promise, RenderError);

describe('steps', () => {
  test('clicking "load more" twice appends the items each click fetched', async () => {
    const page = await render('/more', [
      { type: 'click', selector: '#more' },
      { type: 'click', selector: '#more' },
    ]);
    expect(listItems(page.html)).toEqual(Array.from({ length: 9 }, (_, i) => `item ${i + 1}`));
  });

  test('typing into a search box and pressing Enter leaves the items the script kept', async () => {
    const page = await render('/search', [
      { type: 'type', selector: '#q', text: 'an' },
      { type: 'press', key: 'Enter' },
    ]);
    expect(listItems(page.html)).toEqual(['banana']);
  });

  test('scrolling to the bottom three times loads three more parts of an infinite list', async () => {
    const page = await render('/infinite', [{ type: 'scroll', to: 'bottom', times: 3 }]);
    expect(listItems(page.html)).toEqual(Array.from({ length: 40 }, (_, i) => `row ${i + 1}`));
  });

  test('wait_for waits for an element a timer adds after the load', async () => {
    const page = await render('/late', [{ type: 'wait_for', selector: '#done', timeout_ms: 5_000 }]);
    expect(listItems(page.html)).toEqual(['late one']);
    // Without the step the same page is read before the timer fires.
    expect(listItems((await render('/late', [])).html)).toEqual([]);
  });

  test('a click with all clicks every element the selector matches', async () => {
    const page = await render('/toggles', [{ type: 'click', selector: '.t', all: true }]);
    expect(listItems(page.html)).toEqual(['clicked a', 'clicked b', 'clicked c']);
  });

  test('a scroll with a selector scrolls that element, not the page', async () => {
    const page = await render('/pane', [{ type: 'scroll', to: 'bottom', times: 1, selector: '#pane' }]);
    expect(listItems(page.html)).toEqual(['p1', 'p2', 'p3', 'p4']);
  });

  test('execute_javascript runs in the page and gives its value, as a program or with a top-level return', async () => {
    const page = await render('/search', [
      { type: 'execute_javascript', script: "document.querySelectorAll('#list li').length" },
      {
        type: 'execute_javascript',
        script: "document.getElementById('list').lastElementChild.remove(); return { left: 2 };",
      },
      {
        type: 'execute_javascript',
        script: 'new Promise((resolve) => setTimeout(() => resolve("late"), 50))',
      },
      { type: 'execute_javascript', script: 'undefined' },
    ]);
    expect(page.scriptReturns).toEqual([
      { type: 'number', value: 3 },
      { type: 'object', value: { left: 2 } },
      { type: 'string', value: 'late' },
      { type: 'undefined', value: null },
    ]);
    expect(listItems(page.html)).toEqual(['apple', 'banana']);
  });

  test('execute_javascript fails the render past its output bound or its time', async () => {
    const big = await failureOf(
      render('/search', [{ type: 'execute_javascript', script: "'x'.repeat(70000)" }]),
    );
    expect(big).toMatchObject({
      code: 'RENDER_ERROR',
      message: expect.stringMatching(/^action 0 .*more than the 65536 allowed/),
    });
    const slow = await failureOf(
      render('/search', [{ type: 'execute_javascript', script: 'new Promise(() => {})' }], 2_000),
    );
    expect(slow).toMatchObject({
      code: 'RENDER_ERROR',
      message: expect.stringMatching(/the script did not end within/),
    });
  });

  test('wait pauses before the page is read', async () => {
    const page = await render('/late', [{ type: 'wait', ms: 1_000 }]);
    expect(listItems(page.html)).toEqual(['late one']);
  });

  test('a click that submits a form waits for the new page, whose URL and HTML are returned', async () => {
    const page = await render('/form', [
      { type: 'type', selector: '#q', text: 'shoes' },
      { type: 'click', selector: '#go' },
    ]);
    expect(page.url).toBe(`${server.origin}/results?q=shoes`);
    expect(page.status).toBe(200);
    expect(listItems(page.html)).toEqual(['result for shoes']);
  });

  test('the status returned is that of the page a click opened', async () => {
    const page = await render('/links', [{ type: 'click', selector: '#gone' }]);
    expect(page.url).toBe(`${server.origin}/gone`);
    expect(page.status).toBe(404);
  });

  test('Enter in a form field submits it too', async () => {
    const page = await render('/form', [
      { type: 'type', selector: '#q', text: 'hats' },
      { type: 'press', key: 'Enter' },
    ]);
    expect(listItems(page.html)).toEqual(['result for hats']);
  });
});

describe('failures', () => {
  test('a wait_for whose selector never appears fails with RENDER_ERROR naming step 1', async () => {
    const err = await failureOf(
      render('/more', [
        { type: 'click', selector: '#more' },
        { type: 'wait_for', selector: '#missing', timeout_ms: 300 },
      ]),
    );
    expect(err.code).toBe('RENDER_ERROR');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('action 1 (wait_for #missing): did not appear within 300 ms');
  });

  test('a click on a missing element waits no longer than the render allows, then fails', async () => {
    const started = Date.now();
    const err = await failureOf(render('/more', [{ type: 'click', selector: '#missing' }], 200));
    expect(err.code).toBe('RENDER_ERROR');
    expect(err.message).toMatch(/^action 0 \(click #missing\): no visible element matched within \d+ ms/);
    // wait_timeout_ms + 10 s of grace, less the time kept for reading the page
    expect(Date.now() - started).toBeLessThan(10_200);
  });

  test('a wait longer than the time left fails at once', async () => {
    const started = Date.now();
    const err = await failureOf(render('/more', [{ type: 'wait', ms: 10_000 }], 100));
    expect(err.message).toMatch(/^action 0 \(wait 10000 ms\): needs 10000 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test('an unknown key fails its step', async () => {
    const err = await failureOf(render('/search', [{ type: 'press', key: 'NoSuchKey' }]));
    expect(err.message).toMatch(/^action 0 \(press NoSuchKey\): /);
  });

  test('the text typed never appears in an error', async () => {
    const err = await failureOf(
      render('/search', [
        { type: 'type', selector: '#q', text: 'hunter2' },
        { type: 'wait_for', selector: '#x', timeout_ms: 0 },
      ]),
    );
    expect(err.message).toBe('action 1 (wait_for #x): did not appear within 0 ms');
    expect(err.message).not.toContain('hunter2');
  });

  test('a click that navigates to a forbidden address fails with BLOCKED_TARGET', async () => {
    const before = forbidden.connections;
    const err = await failureOf(render('/away', [{ type: 'click', selector: '#away' }]));
    expect(err.code).toBe('BLOCKED_TARGET');
    expect(forbidden.connections).toBe(before);
  });
});
