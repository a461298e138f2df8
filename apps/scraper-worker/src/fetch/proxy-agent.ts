import type { ClientRequestArgs } from 'node:http';
import { isIP, isIPv6 } from 'node:net';
import type { Duplex } from 'node:stream';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';

type ConnectCallback = (err: Error | null, stream: Duplex) => void;

/** What a tunnel reports back to the attempt that uses it. */
export interface TunnelState {
  proxyFailure: Error | undefined;
  tunnelOpen: boolean;
}

// hpagent opens a CONNECT tunnel for http and https targets alike. The tunnel is asked for the
// address this worker resolved and checked, not the name, so the proxy cannot resolve the name
// to somewhere else; Host header, SNI and certificate checks still use the name.
function pinned(options: ClientRequestArgs, address: string): ClientRequestArgs {
  const hostname = options.hostname ?? options.host ?? '';
  const name = (options as { servername?: string }).servername || (isIP(hostname) ? '' : hostname);
  return {
    ...options,
    host: isIPv6(address) ? `[${address}]` : address,
    ...(name ? { servername: name } : {}),
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(name || address, cert),
  } as ClientRequestArgs;
}

function reporting(state: TunnelState, callback: ConnectCallback | undefined): ConnectCallback {
  return (err, stream) => {
    if (err) state.proxyFailure = err;
    else state.tunnelOpen = true;
    callback?.(err, stream);
  };
}

class PinnedHttpProxyAgent extends HttpProxyAgent {
  readonly #address: string;
  readonly #state: TunnelState;

  constructor(proxy: string, address: string, state: TunnelState) {
    super({ proxy, keepAlive: false });
    this.#address = address;
    this.#state = state;
  }

  override createConnection(options: ClientRequestArgs, callback?: ConnectCallback) {
    return super.createConnection(pinned(options, this.#address), reporting(this.#state, callback));
  }
}

class PinnedHttpsProxyAgent extends HttpsProxyAgent {
  readonly #address: string;
  readonly #state: TunnelState;

  constructor(proxy: string, address: string, state: TunnelState) {
    super({ proxy, keepAlive: false });
    this.#address = address;
    this.#state = state;
  }

  override createConnection(options: ClientRequestArgs, callback?: ConnectCallback) {
    return super.createConnection(pinned(options, this.#address), reporting(this.#state, callback));
  }
}

/** Agents that tunnel through `proxy` to the already checked `address`, recording proxy failures in `state`. */
export function createProxyAgents(proxy: string, address: string, state: TunnelState) {
  return {
    http: new PinnedHttpProxyAgent(proxy, address, state),
    https: new PinnedHttpsProxyAgent(proxy, address, state),
  };
}
