import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressClass, classifyAddress, isAllowedAddress } from './address.ts';

/** Resolves a host name to every address it has; injectable so tests never query real DNS. */
export type Resolve = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname, family) =>
  dns.lookup(hostname, { all: true, family, verbatim: true });

/** A connection was refused because the target address is private or cloud metadata. */
export class BlockedTargetError extends Error {
  override readonly name = 'BlockedTargetError';
  readonly code = 'BLOCKED_TARGET';
  readonly hostname: string;
  readonly address: string;
  readonly kind: AddressClass;
  constructor(hostname: string, address: string) {
    const kind = classifyAddress(address);
    super(
      hostname === address
        ? `${address} is a ${kind} address`
        : `${hostname} resolves to ${address}, a ${kind} address`,
    );
    this.hostname = hostname;
    this.address = address;
    this.kind = kind;
  }
}

const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');
// RFC 6761: these names are loopback by definition; no resolver is asked.
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * A `lookup` for `http.request`, `net.connect` or got: resolves, then refuses (error code
 * BLOCKED_TARGET) if any address is not allowed, so the check applies to the very address
 * connected to. Node skips `lookup` for IP-literal hosts: check those with `assertAllowedHost`.
 */
export function safeLookup(allowPrivate: boolean, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    resolve(hostname, family).then(
      (addresses) => {
        const blocked = addresses.find((a) => !isAllowedAddress(a.address, allowPrivate));
        if (blocked) return callback(new BlockedTargetError(hostname, blocked.address), '', 0);
        const first = addresses[0];
        if (!first)
          return callback(
            Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** Throws BlockedTargetError when `hostname` is an IP literal (or localhost) that may not be used. */
export function assertAllowedHost(hostname: string, allowPrivate: boolean): void {
  const host = bare(hostname);
  const address = isIP(host) ? host : isLocalhostName(host) ? '127.0.0.1' : null;
  if (address && !isAllowedAddress(address, allowPrivate)) throw new BlockedTargetError(host, address);
}

export type TargetCheck = { ok: true } | { ok: false; reason: string };

/**
 * The one answer for a host name that is refused, whatever the reason (it resolves to a blocked
 * address, to none, or not in time): telling them apart would let a client map internal DNS.
 */
const UNREACHABLE_HOST = 'must be a publicly reachable host';

/**
 * Validates a URL's host at configuration time (a webhook being created): IP literals (and
 * localhost) are refused by their class, which the client wrote itself; names are resolved and
 * every address must be allowed, and a refused name gets UNREACHABLE_HOST, never its addresses.
 */
export async function checkUrlTarget(
  url: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = 5_000,
): Promise<TargetCheck> {
  if (!URL.canParse(url)) return { ok: false, reason: 'is not a valid URL' };
  const host = bare(new URL(url).hostname);
  try {
    assertAllowedHost(host, allowPrivate);
  } catch (err) {
    if (err instanceof BlockedTargetError)
      return { ok: false, reason: `must not target a ${err.kind} address` };
    throw err;
  }
  if (isIP(host) || isLocalhostName(host)) return { ok: true };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), timeoutMs);
  });
  const addresses = await Promise.race([resolve(host, 0), timeout])
    .catch(() => null)
    .finally(() => clearTimeout(timer));
  const allowed =
    addresses !== null &&
    addresses.length > 0 &&
    addresses.every((a) => isAllowedAddress(a.address, allowPrivate));
  return allowed ? { ok: true } : { ok: false, reason: UNREACHABLE_HOST };
}
