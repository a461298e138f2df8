// Outbound safety end to end, with loopback targets only: one local server stands in for the
// forbidden network, and the test asserts that it never saw a connection.

import { lookup as systemLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
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

let allowed: LocalServer;
let forbidden: LocalServer;
let strict: Renderer;
let onePort: Renderer;

// Maps every *.test name to loopback, as a hostile DNS answer would; other names as usual.
const testLookup: LookupFunction = (hostname, options, callback) => {
  if (hostname.endsWith('.test')) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
  systemLookup(hostname, options, callback);
};

beforeAll(async () => {
  forbidden = await startServer((_req, res) => html(res, '<p>forbidden content</p>'));
  const b = () => `127.0.0.1:${forbidden.port}`;
  allowed = await startServer((req, res) => {
    switch (req.url) {
      case '/subresources':
        return html(
          res,
          `<ul id="list"></ul>
          <img src="http://${b()}/pixel.gif">
          <link rel="stylesheet" href="http://${b()}/style.css">
          <script src="http://${b()}/script.js"></script>
          <iframe src="http://${b()}/frame"></iframe>
          <img src="https://${b()}/tls.gif">
          <script>
            function add(t) { const li = document.createElement('li'); li.textContent = t; document.getElementById('list').append(li); }
            fetch('http://${b()}/api').then(() => add('fetch reached'), () => add('fetch refused'));
            try { new WebSocket('ws://${b()}/socket').onerror = () => add('socket refused'); } catch { add('socket refused'); }
          </script>`,
        );
      case '/webrtc': // gathers ICE candidates for 1 s while the slow script holds "load" back
        return html(
          res,
          `<ul id="list"></ul><script async src="/slow.js"></script><script>
            const pc = new RTCPeerConnection({ iceServers: [] });
            const found = [];
            pc.onicecandidate = (e) => { if (e.candidate) found.push(e.candidate.candidate); };
            pc.createDataChannel('probe');
            pc.createOffer().then((offer) => pc.setLocalDescription(offer));
            setTimeout(() => {
              const li = document.createElement('li');
              li.textContent = 'udp candidates: ' + found.filter((c) => / udp /i.test(c)).length;
              document.getElementById('list').append(li);
            }, 1000);
          </script>`,
        );
      case '/slow.js': // images are not loaded for a render without a screenshot: a script holds "load"
        return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/javascript' }).end(), 1300);
      case '/redirect':
        res.writeHead(302, { location: `http://${b()}/landing` });
        return void res.end();
      default:
        return html(res, '<p>allowed content</p>');
    }
  });
  [strict, onePort] = await Promise.all([
    Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: false, lookup: testLookup }),
    Renderer.start({
      concurrency: 2,
      executablePath: CHROMIUM,
      allowPrivate: false,
      isAllowedAddress: (_ip, port) => port === allowed.port,
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([strict?.close(), onePort?.close()]);
  await Promise.all([allowed?.close(), forbidden?.close()]);
});

const failureOf = (promise: Promise<unknown>) => renderFailure(promise, RenderError);

describe('with private targets not allowed', () => {
  test.each([
    ['an http loopback address', (port: number) => `http://127.0.0.1:${port}/`],
    ['an https loopback address (CONNECT tunnel)', (port: number) => `https://127.0.0.1:${port}/`],
    ['localhost', (port: number) => `http://localhost:${port}/`],
    ['a name that DNS maps to loopback', (port: number) => `http://rebind.test:${port}/`],
    ['a name over https that DNS maps to loopback', (port: number) => `https://rebind.test:${port}/`],
  ])('the main document at %s fails with BLOCKED_TARGET and is never fetched', async (_name, url) => {
    const before = forbidden.connections;
    const err = await failureOf(
      strict.render({ url: url(forbidden.port), waitStrategy: 'load', waitTimeoutMs: 5_000 }),
    );
    expect(err.code).toBe('BLOCKED_TARGET');
    expect(err.retryable).toBe(false);
    expect(forbidden.connections).toBe(before);
  });
});

describe('with one allowed port', () => {
  test('subresources, frames, fetches and sockets to a forbidden address are never sent', async () => {
    const before = forbidden.connections;
    const page = await onePort.render({
      url: `${allowed.origin}/subresources`,
      waitStrategy: 'networkidle0',
      waitTimeoutMs: 10_000,
    });
    expect(page.status).toBe(200);
    expect(listItems(page.html).sort()).toEqual(['fetch refused', 'socket refused']);
    expect(page.html).not.toContain('forbidden content');
    expect(forbidden.connections).toBe(before);
  });

  test('a redirect of the main document to a forbidden address fails with BLOCKED_TARGET', async () => {
    const before = forbidden.connections;
    const err = await failureOf(
      onePort.render({ url: `${allowed.origin}/redirect`, waitStrategy: 'load', waitTimeoutMs: 5_000 }),
    );
    expect(err.code).toBe('BLOCKED_TARGET');
    expect(allowed.requests).toContain('GET /redirect');
    expect(forbidden.connections).toBe(before);
  });

  test('WebRTC gathers no UDP candidates, so it cannot reach addresses past the proxy', async () => {
    const page = await onePort.render({
      url: `${allowed.origin}/webrtc`,
      waitStrategy: 'load',
      waitTimeoutMs: 5_000,
    });
    expect(listItems(page.html)).toEqual(['udp candidates: 0']);
  });

  test('the allowed port itself renders', async () => {
    const page = await onePort.render({
      url: `${allowed.origin}/`,
      waitStrategy: 'load',
      waitTimeoutMs: 5_000,
    });
    expect(page.html).toContain('allowed content');
  });
});
