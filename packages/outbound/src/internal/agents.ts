import type { Agent, ClientRequestArgs } from 'node:http';
import { type LookupFunction, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

type ConnectCallback = (err: Error | null, stream: Duplex) => void;

/** What a guarded agent asks of its guard for each connection it opens. */
export interface ConnectionChecks {
  /** Throws when the host is an IP literal (or a localhost name) that may not be used. */
  checkHost(host: string, port: number): void;
  /** The connection's resolver, which refuses a name with any blocked address. */
  lookup(port: number): LookupFunction;
  /** The error to tear the connection down with when its peer may not be used; null if it may. */
  refusePeer(host: string, peer: string | undefined, port: number): Error | null;
}

/**
 * Routes every connection `agent` opens through `checks`. Node skips the lookup for IP literals,
 * so those are refused here before a socket exists; the peer check on 'connect' is the second line
 * of defence, for any path that bypassed both.
 */
export function guardAgent<A extends Agent>(agent: A, checks: ConnectionChecks): A {
  const createConnection = agent.createConnection.bind(agent);
  agent.createConnection = (options: ClientRequestArgs, callback?: ConnectCallback) => {
    const host = (options.host ?? options.hostname ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(options.port ?? 0);
    try {
      checks.checkHost(host, port);
    } catch (err) {
      if (!callback) throw err;
      // The agent's callback takes an error alone (Node's http.Agent documents this).
      (callback as (err: Error) => void)(err as Error);
      return undefined;
    }
    const socket = createConnection({ ...options, lookup: checks.lookup(port) }, callback);
    if (socket instanceof Socket) {
      // Prepended so it runs before TLS starts its handshake or HTTP flushes the request.
      socket.prependOnceListener('connect', () => {
        const refused = checks.refusePeer(host, socket.remoteAddress, port);
        if (refused) socket.destroy(refused);
      });
    }
    return socket;
  };
  return agent;
}
