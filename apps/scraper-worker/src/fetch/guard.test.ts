import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from '@jest/globals';
import { BlockedTargetError } from '@scrapejobs/outbound';
import { startServer, type TestServer } from '../../../../test/support/fetch-servers.ts';
import { addressPolicy } from './address.ts';
import { scraperGuard } from './guard.ts';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('scraperGuard lookup', () => {
  const fixed =
    (...addresses: string[]): net.LookupFunction =>
    (_host, _options, callback) =>
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );

  function resolve(lookup: net.LookupFunction, all: boolean): Promise<unknown> {
    return new Promise((done, fail) => {
      lookup('site.test', { all }, (error, address) => (error ? fail(error) : done(address)));
    });
  }

  test('passes allowed addresses through in both result shapes', async () => {
    const lookup = scraperGuard(addressPolicy(true), fixed('127.0.0.1', '::1')).lookup(80);
    await expect(resolve(lookup, false)).resolves.toBe('127.0.0.1');
    await expect(resolve(lookup, true)).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
  });

  test('refuses the name and reports it when an address is refused', async () => {
    let blocked = 0;
    const lookup = scraperGuard(addressPolicy(false), fixed('127.0.0.1'), () => blocked++).lookup(80);
    await expect(resolve(lookup, true)).rejects.toBeInstanceOf(BlockedTargetError);
    expect(blocked).toBe(1);
  });

  test('accepts a resolver that answers with a single address despite all: true', async () => {
    const single: net.LookupFunction = (_host, _options, callback) => callback(null, '127.0.0.1', 4);
    const lookup = scraperGuard(addressPolicy(true), single).lookup(80);
    await expect(resolve(lookup, true)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});

describe('scraperGuard agents', () => {
  // Node never passes IP literals to a lookup: the agents refuse them before a socket exists.
  test('refuses a blocked IP literal before anything reaches it', async () => {
    const site = await startServer((_req, res) => res.end('secret'));
    servers.push(site);
    let blocked = 0;
    const agent = scraperGuard(addressPolicy(false), undefined, () => blocked++).agents().http;
    const error = await new Promise<Error>((resolve) => {
      http.get(`${site.url}/`, { agent }, () => resolve(new Error('got a response'))).on('error', resolve);
    });
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(error).toBeInstanceOf(BlockedTargetError);
    expect(blocked).toBe(1);
    expect(site.requests).toHaveLength(0);
  });

  test('lets an allowed peer through', async () => {
    const site = await startServer((_req, res) => res.end('fine'));
    servers.push(site);
    const agent = scraperGuard(addressPolicy(true)).agents().http;
    const status = await new Promise<number | undefined>((resolve, reject) => {
      http
        .get(`${site.url}/`, { agent }, (res) => {
          res.resume();
          resolve(res.statusCode);
        })
        .on('error', reject);
    });
    agent.destroy();
    expect(status).toBe(200);
  });

  test('refuses a TLS connection to a blocked IP literal before the handshake sends a byte', async () => {
    let received = 0;
    const server = net.createServer((socket) => {
      socket.on('data', (data) => {
        received += data.length;
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = scraperGuard(addressPolicy(false)).agents().https;
    const error = await new Promise<Error>((resolve) => {
      https
        .get(`https://127.0.0.1:${port}/`, { agent }, () => resolve(new Error('got a response')))
        .on('error', resolve);
    });
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => server.close(resolve));
    expect(error).toBeInstanceOf(BlockedTargetError);
    expect(received).toBe(0);
  });
});
