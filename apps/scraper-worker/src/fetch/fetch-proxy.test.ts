import { afterEach, describe, expect, test } from '@jest/globals';
import {
  mapLookup,
  type ProxyMode,
  refusingUrl,
  startProxy,
  startServer,
  startTlsServer,
  type TestProxy,
} from '../../../../test/support/fetch-servers.ts';
import { FetchError } from './errors.ts';
import { fetchPage } from './fetch-page.ts';
import { createProxyPicker, type ProxyPicker } from './proxy-picker.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function site() {
  const server = await startServer((req, res) => res.end(`page ${req.url}`));
  closers.push(server.close);
  return server;
}

async function proxies(...modes: ProxyMode[]): Promise<TestProxy[]> {
  const started = await Promise.all(modes.map((mode) => startProxy(mode)));
  for (const proxy of started) closers.push(proxy.close);
  return started;
}

function entries(list: { url: string }[], country: string | null = null) {
  return list.map((p) => ({ url: p.url, country }));
}

/** Wraps a picker to record what it was asked and told. */
function recording(picker: ProxyPicker) {
  const failures: string[] = [];
  return {
    failures,
    picker: {
      pick: (attempt: number) => picker.pick(attempt),
      reportFailure: (url: string) => {
        failures.push(url);
        picker.reportFailure(url);
      },
    },
  };
}

const open = { allowPrivate: true } as const;

describe('fetchPage through proxies', () => {
  test('round_robin spreads pages evenly over 3 proxies', async () => {
    const target = await site();
    const pool = await proxies('ok', 'ok', 'ok');
    const picker = createProxyPicker(entries(pool), 'round_robin', null, 'job_rr');
    for (let i = 0; i < 6; i++) {
      const page = await fetchPage(`${target.url}/${i}`, { ...open, proxy: picker });
      expect(page.body.toString()).toBe(`page /${i}`);
    }
    expect(pool.map((p) => p.connects.length)).toEqual([2, 2, 2]);
    expect(target.requests).toHaveLength(6);
  });

  test('random sends every page through one of the proxies', async () => {
    const target = await site();
    const pool = await proxies('ok', 'ok', 'ok');
    const picker = createProxyPicker(entries(pool), 'random', null, 'job_random');
    for (let i = 0; i < 9; i++) await fetchPage(`${target.url}/${i}`, { ...open, proxy: picker });
    expect(pool.reduce((sum, p) => sum + p.connects.length, 0)).toBe(9);
    expect(target.requests).toHaveLength(9);
  });

  test('sticky keeps every page of a job on the same proxy', async () => {
    const target = await site();
    const pool = await proxies('ok', 'ok', 'ok');
    for (let i = 0; i < 4; i++) {
      const picker = createProxyPicker(entries(pool), 'sticky', null, 'job_sticky_e2e');
      await fetchPage(`${target.url}/${i}`, { ...open, proxy: picker });
    }
    expect(pool.map((p) => p.connects.length).sort()).toEqual([0, 0, 4]);
  });

  test('a country uses only the proxies of that country', async () => {
    const target = await site();
    const [us, de1, de2] = await proxies('ok', 'ok', 'ok');
    if (!us || !de1 || !de2) throw new Error('proxies missing');
    const list = [
      { url: us.url, country: 'US' },
      { url: de1.url, country: 'DE' },
      { url: de2.url, country: 'DE' },
    ];
    const picker = createProxyPicker(list, 'round_robin', 'DE', 'job_geo');
    for (let i = 0; i < 4; i++) await fetchPage(`${target.url}/${i}`, { ...open, proxy: picker });
    expect([us.connects.length, de1.connects.length, de2.connects.length]).toEqual([0, 2, 2]);
  });

  test('a country without proxies fails with a non-retryable PROXY_ERROR and sends nothing', async () => {
    const target = await site();
    const pool = await proxies('ok');
    const picker = createProxyPicker(entries(pool, 'US'), 'round_robin', 'JP', 'job_geo_none');
    const error = await fetchPage(target.url, { ...open, proxy: picker }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect([(error as FetchError).code, (error as FetchError).retryable]).toEqual(['PROXY_ERROR', false]);
    expect(target.requests).toHaveLength(0);
  });

  test.each([
    ['refuses connections', 'refused'],
    ['answers 407', 'auth_required'],
    ['answers 502', 'bad_gateway'],
  ] as const)('a proxy that %s is reported and rotated out for the retry', async (_label, kind) => {
    const target = await site();
    const [good] = await proxies('ok');
    const badUrl = kind === 'refused' ? await refusingUrl() : ((await proxies(kind))[0]?.url ?? '');
    if (!good) throw new Error('proxy missing');
    const { picker, failures } = recording(
      createProxyPicker(entries([{ url: badUrl }, good]), 'round_robin', null, `job_rotate_${kind}`),
    );
    for (let i = 0; i < 4; i++) {
      const page = await fetchPage(`${target.url}/${i}`, { ...open, proxy: picker });
      expect(page.body.toString()).toBe(`page /${i}`);
    }
    expect(failures).toEqual([badUrl]);
    expect(good.connects).toHaveLength(4);
  });

  test('fails with PROXY_ERROR when every attempt fails on a proxy', async () => {
    const target = await site();
    const pool = await proxies('bad_gateway', 'auth_required');
    const { picker, failures } = recording(createProxyPicker(entries(pool), 'random', null, 'job_all_bad'));
    const error = await fetchPage(target.url, { ...open, proxy: picker, retries: 2 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchError);
    expect([(error as FetchError).code, (error as FetchError).retryable]).toEqual(['PROXY_ERROR', true]);
    expect((error as FetchError).message).not.toContain('127.0.0.1');
    expect(failures).toHaveLength(3);
    expect(target.requests).toHaveLength(0);
  });

  test('a target error through a proxy is not blamed on the proxy', async () => {
    const target = await startServer((_req, res) => res.writeHead(404).end());
    closers.push(target.close);
    const pool = await proxies('ok');
    const { picker, failures } = recording(createProxyPicker(entries(pool), 'sticky', null, 'job_404'));
    const error = await fetchPage(target.url, { ...open, proxy: picker }).catch((e: unknown) => e);
    expect([(error as FetchError).code, (error as FetchError).status]).toEqual(['HTTP_ERROR', 404]);
    expect(failures).toEqual([]);
  });

  test('asks the proxy for the address the worker checked, keeping the name in the Host header', async () => {
    const target = await site();
    const pool = await proxies('ok');
    const picker = createProxyPicker(entries(pool), 'sticky', null, 'job_pin');
    const lookup = mapLookup({ 'shop.test': '127.0.0.1' });
    const page = await fetchPage(`http://shop.test:${target.port}/item`, { ...open, proxy: picker, lookup });
    expect(page.url).toBe(`http://shop.test:${target.port}/item`);
    expect(pool[0]?.connects).toEqual([`127.0.0.1:${target.port}`]);
    expect(target.hosts).toEqual([`shop.test:${target.port}`]);
  });

  test('checks the target before using the proxy: a loopback target is refused and the proxy is not used', async () => {
    const target = await site();
    const pool = await proxies('ok');
    const picker = createProxyPicker(entries(pool), 'sticky', null, 'job_blocked');
    const lookup = mapLookup({ 'shop.test': '127.0.0.1' });
    for (const url of [target.url, `http://shop.test:${target.port}/`]) {
      const error = await fetchPage(url, { allowPrivate: false, proxy: picker, lookup }).catch(
        (e: unknown) => e,
      );
      expect((error as FetchError).code).toBe('BLOCKED_TARGET');
    }
    expect(pool[0]?.connects).toEqual([]);
    expect(target.requests).toEqual([]);
  });

  test('tunnels https to the checked address with the name as SNI, and refuses an untrusted certificate', async () => {
    const target = await startTlsServer();
    closers.push(target.close);
    const pool = await proxies('ok');
    const { picker, failures } = recording(createProxyPicker(entries(pool), 'sticky', null, 'job_tls'));
    const lookup = mapLookup({ 'shop.test': '127.0.0.1' });
    const error = await fetchPage(`https://shop.test:${target.port}/`, {
      ...open,
      proxy: picker,
      lookup,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect([(error as FetchError).code, (error as FetchError).retryable]).toEqual(['NETWORK_ERROR', false]);
    expect(pool[0]?.connects).toEqual([`127.0.0.1:${target.port}`]);
    expect(target.servernames).toEqual(['shop.test']);
    expect(failures).toEqual([]);
  });
});
