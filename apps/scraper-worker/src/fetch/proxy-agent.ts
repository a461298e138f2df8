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

// hpagent's agents open the tunnel in createConnection; both are pinned the same way.
function pin<A extends HttpProxyAgent | HttpsProxyAgent>(agent: A, address: string, state: TunnelState): A {
  const createConnection = agent.createConnection.bind(agent);
  agent.createConnection = (options: ClientRequestArgs, callback?: ConnectCallback) =>
    createConnection(pinned(options, address), reporting(state, callback));
  return agent;
}

/** Agents that tunnel through `proxy` to the already checked `address`, recording proxy failures in `state`. */
export function createProxyAgents(proxy: string, address: string, state: TunnelState) {
  return {
    http: pin(new HttpProxyAgent({ proxy, keepAlive: false }), address, state),
    https: pin(new HttpsProxyAgent({ proxy, keepAlive: false }), address, state),
  };
}
