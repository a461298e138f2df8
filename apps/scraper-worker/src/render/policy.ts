import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, isIpAddress } from '@scrapejobs/outbound';
import { SCRAPER_ADDRESS_RULES } from '../fetch/index.ts';

/** Decides whether the renderer may open a connection to an address and port. */
export type TargetPolicy = (ip: string, port: number) => boolean;

/**
 * Contract section 7: public addresses always, loopback and private ranges only with
 * `allowPrivate`, metadata addresses never. A test hook, when given, replaces the first two
 * rules (so a test can allow one loopback port and forbid another); metadata stays blocked.
 */
export function targetPolicy(
  allowPrivate: boolean,
  hook?: (ip: string, port: number) => boolean,
): TargetPolicy {
  return (ip, port) => {
    if (!isIpAddress(ip)) return false;
    const cls = classifyAddress(ip, SCRAPER_ADDRESS_RULES);
    if (cls === 'metadata') return false;
    if (hook) return hook(ip, port);
    return cls === 'public' || allowPrivate;
  };
}

/** Every address a host name resolves to (an IP literal resolves to itself). */
export function resolveHost(host: string, lookup: LookupFunction = dnsLookup): Promise<string[]> {
  if (isIP(host)) return Promise.resolve([host]);
  return new Promise((resolve, reject) => {
    lookup(host, { all: true, order: 'verbatim' }, (err, address) => {
      if (err) return reject(err);
      // A test resolver may answer with one address even when asked for all.
      const list = typeof address === 'string' ? [address] : address.map((a) => a.address);
      resolve(list);
    });
  });
}
