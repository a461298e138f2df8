// The HTTP side of test/support/host-site.ts, in a thread of its own: arrivals and answers are
// timed by an event loop that nothing else runs on, so the test process's work (an API built in
// it, database polls) cannot make a request look as if it had arrived late.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort } from 'node:worker_threads';

/** Messages from the test's side. */
export type ToThread =
  | {
      type: 'answer';
      id: number;
      status: number;
      headers: Record<string, string>;
      body: string;
      delayMs: number;
    }
  | { type: 'hold'; id: number }
  | { type: 'release' }
  | { type: 'close' };

/** Messages to the test's side; `inFlight` and `peak` are those after the event. */
export type FromThread =
  | { type: 'listening'; port: number }
  | { type: 'arrived'; id: number; path: string; start: number; inFlight: number; peak: number }
  | { type: 'over'; id: number; end: number; status?: number; inFlight: number }
  | { type: 'closed' };

const port = parentPort!;
const post = (message: FromThread) => port.postMessage(message);
const pending = new Map<number, { res: ServerResponse; start: number; over: (status?: number) => void }>();
const held = new Set<ServerResponse>();
const flight = { now: 0, peak: 0 };
let ids = 0;

const server = createServer((req, res) => {
  const id = ids++;
  const start = Date.now();
  flight.now++;
  flight.peak = Math.max(flight.peak, flight.now);
  let ended = false;
  const over = (status?: number) => {
    if (ended) return;
    ended = true;
    flight.now--;
    pending.delete(id);
    held.delete(res);
    post({
      type: 'over',
      id,
      end: Date.now(),
      ...(status !== undefined && { status }),
      inFlight: flight.now,
    });
  };
  res.on('close', () => over());
  pending.set(id, { res, start, over });
  const path = new URL(req.url ?? '/', 'http://site').pathname;
  post({ type: 'arrived', id, path, start, inFlight: flight.now, peak: flight.peak });
});

port.on('message', (message: ToThread) => {
  if (message.type === 'release' || message.type === 'close') {
    for (const res of held) res.destroy();
    if (message.type === 'close') {
      server.closeAllConnections();
      server.close(() => post({ type: 'closed' }));
    }
    return;
  }
  const request = pending.get(message.id);
  if (!request) return;
  if (message.type === 'hold') {
    held.add(request.res);
    return;
  }
  const { res, start, over } = request;
  const send = () => {
    if (res.destroyed) return;
    res.statusCode = message.status;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    for (const [name, value] of Object.entries(message.headers)) res.setHeader(name, value);
    // Counted as over once sent: its client cannot have read it any earlier.
    over(message.status);
    res.end(message.body);
  };
  // The delay runs from the request's arrival, whenever the test's side answered.
  setTimeout(send, Math.max(0, start + message.delayMs - Date.now()));
});

server.listen(0, '127.0.0.1', () =>
  post({ type: 'listening', port: (server.address() as AddressInfo).port }),
);
