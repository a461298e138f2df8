import net from 'node:net';

/**
 * A TCP proxy in front of a real server, to make it "unreachable" on demand:
 * `refuse()` closes the port and drops every connection; `stall()` accepts connections
 * but never answers (a black hole); `freeze()` keeps open connections open but stops carrying
 * their bytes; `restore()` forwards again on the same port.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1') {
  const sockets = new Set<net.Socket>();
  let mode: 'forward' | 'stall' = 'forward';
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const pairs = new Set<[net.Socket, net.Socket]>();
  const onConnection = (inbound: net.Socket) => {
    track(inbound);
    if (mode === 'stall') return;
    const outbound = net.connect(targetPort, targetHost);
    track(outbound);
    const pair: [net.Socket, net.Socket] = [inbound, outbound];
    pairs.add(pair);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => {
      inbound.destroy();
      pairs.delete(pair);
    });
  };
  let server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  const close = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  return {
    port,
    async refuse() {
      const closed = close();
      dropAll();
      await closed;
    },
    async stall() {
      mode = 'stall';
      dropAll();
    },
    async freeze() {
      mode = 'stall';
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
      }
    },
    async restore() {
      mode = 'forward';
      if (!server.listening) {
        server = net.createServer(onConnection);
        await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      }
    },
    async stop() {
      const closed = close();
      dropAll();
      await closed;
    },
  };
}
