import { promises as dns, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, isIPv6, type LookupFunction } from 'node:net';
import { type AddressRules, classifyAddress, isIpAddress } from './address.ts';
import { guardAgent } from './agents.ts';
import { BlockedTargetError } from './blocked.ts';

/** Resolves a host name to every address it has; injectable so tests never query real DNS. */
export type Resolve = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

/** The operating system's resolver, answering every address in its own order. */
export const systemResolve: Resolve = (hostname, family) =>
  dns.lookup(hostname, { all: true, family, verbatim: true });

/** A Resolve over a callback-style lookup (the shape of `dns.lookup`), e.g. a test's fake resolver. */
export function resolverFromLookup(lookup: LookupFunction): Resolve {
  return (hostname, family) =>
    new Promise((resolve, reject) => {
      lookup(hostname, { all: true, family, order: 'verbatim' }, (err, address, addressFamily) => {
        if (err) return reject(err);
        // A resolver may answer with one address even when asked for all.
        if (typeof address !== 'string') return resolve(address);
        resolve([{ address, family: addressFamily ?? (isIPv6(address) ? 6 : 4) }]);
      });
    });
}

export interface GuardOptions {
  /** ALLOW_PRIVATE_NETWORK_TARGETS: loopback and private ranges become allowed, metadata never. */
  allowPrivate: boolean;
  /** Resolves names; the system resolver by default. */
  resolve?: Resolve;
  /**
   * Decides instead of the class rule (public, or private when allowed), e.g. a test that lets one
   * loopback port through; metadata addresses and strings that are not addresses stay refused.
   */
  isAllowedAddress?: (address: string, port: number) => boolean;
  /** Stricter classification: the scraper counts all of link-local as metadata. */
  rules?: AddressRules;
  /** Told of every refusal, however it then surfaces (a request's error, a destroyed socket). */
  onBlocked?: (error: BlockedTargetError) => void;
}

const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');
// RFC 6761: these names are loopback by definition.
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/** The address a host stands for without a resolver: an IP literal itself, loopback for localhost names; null for other names. */
export function fixedAddress(host: string): string | null {
  const name = bare(host);
  if (isIP(name)) return name;
  return isLocalhostName(name) ? '127.0.0.1' : null;
}

/**
 * The one outbound check (docs/api.md §7) for fetching, rendering and webhook delivery: hosts are
 * checked before connecting, names resolve through a resolver that refuses them when any address
 * is blocked (so the check applies to the address actually connected to, and DNS rebinding is
 * caught on each connection), and agents check the connected peer again. Every refusal is a
 * BlockedTargetError. `port` arguments only matter to an `isAllowedAddress` hook.
 */
export class OutboundGuard {
  readonly #allowPrivate: boolean;
  readonly #resolve: Resolve;
  readonly #isAllowedAddress: ((address: string, port: number) => boolean) | undefined;
  readonly #rules: AddressRules;
  readonly #onBlocked: ((error: BlockedTargetError) => void) | undefined;

  constructor(options: GuardOptions) {
    this.#allowPrivate = options.allowPrivate;
    this.#resolve = options.resolve ?? systemResolve;
    this.#isAllowedAddress = options.isAllowedAddress;
    this.#rules = options.rules ?? {};
    this.#onBlocked = options.onBlocked;
  }

  /** Whether a connection to the IP address `address` (on `port`) is allowed. */
  allows(address: string, port: number): boolean {
    if (!isIpAddress(address)) return false;
    const kind = classifyAddress(address, this.#rules);
    if (kind === 'metadata') return false;
    if (this.#isAllowedAddress) return this.#isAllowedAddress(address, port);
    return kind === 'public' || this.#allowPrivate;
  }

  /** Throws BlockedTargetError when `host` is an IP literal or a localhost name that may not be used. */
  checkHost(host: string, port: number): void {
    const address = fixedAddress(host);
    if (address !== null && !this.allows(address, port)) throw this.#refuse(bare(host), address);
  }

  /**
   * The address to connect to for `host`: an IP literal itself, else the first address of the
   * name, all of which must be allowed. Rejects with BlockedTargetError, or the resolver's error.
   */
  async resolve(host: string, port: number): Promise<LookupAddress> {
    const [first] = await this.#resolveAll(host, port, 0);
    return first!;
  }

  /** A `lookup` for `net.connect` or `http.request` to `port` that refuses blocked names (see resolve). */
  lookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      this.#resolveAll(hostname, port, family).then(
        (addresses) => {
          if (options.all) return callback(null, addresses);
          const [first] = addresses;
          callback(null, first!.address, first!.family);
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
    };
  }

  /**
   * HTTP and HTTPS agents (built with `options`) whose every connection is checked: the host
   * before a socket exists, names in their lookup, and the connected peer on 'connect'.
   */
  agents(options: http.AgentOptions = {}): { http: http.Agent; https: https.Agent } {
    const checks = {
      checkHost: (host: string, port: number) => this.checkHost(host, port),
      lookup: (port: number) => this.lookup(port),
      refusePeer: (host: string, peer: string | undefined, port: number) =>
        peer !== undefined && this.allows(peer, port) ? null : this.#refuse(host, peer ?? ''),
    };
    return {
      http: guardAgent(new http.Agent(options), checks),
      https: guardAgent(new https.Agent(options), checks),
    };
  }

  async #resolveAll(host: string, port: number, family: 0 | 4 | 6): Promise<LookupAddress[]> {
    const name = bare(host);
    this.checkHost(name, port);
    if (isIP(name)) return [{ address: name, family: isIP(name) }];
    const addresses = await this.#resolve(name, family);
    const refused = addresses.find((a) => !this.allows(a.address, port));
    if (refused) throw this.#refuse(name, refused.address);
    if (addresses.length === 0)
      throw Object.assign(new Error(`${name} has no address`), { code: 'ENOTFOUND' });
    return addresses;
  }

  #refuse(host: string, address: string): BlockedTargetError {
    const error = new BlockedTargetError(host, address, this.#rules);
    this.#onBlocked?.(error);
    return error;
  }
}
