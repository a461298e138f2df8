import dns, { type LookupAddress } from 'node:dns';
import http, { type ClientRequestArgs } from 'node:http';
import https from 'node:https';
import { type LookupFunction, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressPolicy } from './address.ts';

/** Raised inside a connection when the address about to be (or just) connected to is refused. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  code = 'ERR_BLOCKED_TARGET';

  // Messages never name the refused address: it would reveal internal DNS to the job's owner.
  constructor(message: string) {
    super(message);
  }
}

type ConnectCallback = (err: Error | null, stream: Duplex) => void;

export const systemLookup: LookupFunction = (hostname, options, callback) =>
  dns.lookup(hostname, options, callback);

/**
 * Wraps a resolver so that a name is refused when ANY of its addresses is refused. Node connects
 * only to addresses this returns, so the check applies to the address actually connected to, and
 * a name that re-resolves differently later (DNS rebinding) is checked again on that connection.
 */
export function guardLookup(
  base: LookupFunction,
  policy: AddressPolicy,
  onBlocked: () => void,
): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (error, result, family) => {
      if (error) return callback(error, '');
      const addresses: LookupAddress[] =
        typeof result === 'string' ? [{ address: result, family: family ?? 4 }] : result;
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      if (addresses.some((a) => !policy(a.address))) {
        onBlocked();
        return callback(
          new BlockedAddressError(`${hostname} resolves to an address that targets may not use`),
          '',
        );
      }
      if (options.all) return callback(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves a hostname through a guarded lookup to the single address to use. */
export function resolveGuarded(lookup: LookupFunction, hostname: string): Promise<string> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: false }, (error, address) => {
      if (error) reject(error);
      else resolve(typeof address === 'string' ? address : (address[0]?.address ?? ''));
    });
  });
}

// Second line of defence behind the lookup: a connection whose peer is refused is torn down at
// once. It catches paths that skip the lookup (Node does not call it for IP literals).
function verifyPeer(socket: Duplex | null | undefined, policy: AddressPolicy, onBlocked: () => void): void {
  if (!(socket instanceof Socket)) return;
  // Prepended so it runs before TLS starts its handshake or HTTP flushes the request on 'connect'.
  socket.prependOnceListener('connect', () => {
    const peer = socket.remoteAddress;
    if (peer === undefined || !policy(peer)) {
      onBlocked();
      socket.destroy(new BlockedAddressError('connected to an address that targets may not use'));
    }
  });
}

// One wrapper for both agents: http.Agent and https.Agent differ only in how they open the socket.
function checkPeers(agent: http.Agent, policy: AddressPolicy, onBlocked: () => void): void {
  const createConnection = agent.createConnection.bind(agent);
  agent.createConnection = (options: ClientRequestArgs, callback?: ConnectCallback) => {
    const socket = createConnection(options, callback);
    verifyPeer(socket, policy, onBlocked);
    return socket;
  };
}

/** Direct-connection HTTP agent that verifies the connected peer address. */
export class GuardedHttpAgent extends http.Agent {
  constructor(policy: AddressPolicy, onBlocked: () => void) {
    super({ keepAlive: false });
    checkPeers(this, policy, onBlocked);
  }
}

/** Direct-connection HTTPS agent that verifies the connected peer address. */
export class GuardedHttpsAgent extends https.Agent {
  constructor(policy: AddressPolicy, onBlocked: () => void) {
    super({ keepAlive: false });
    checkPeers(this, policy, onBlocked);
  }
}
