// A target site that keeps the time line of its requests, for the tests of politeness toward
// target hosts (docs/api.md §19): when each request arrived and when its answer went out, and how
// many were in flight at once.
import { Worker } from 'node:worker_threads';
import type { FromThread, ToThread } from './host-site-thread.ts';
import { listPage } from './site.ts';

export interface Visit {
  path: string;
  /** Which request of this path it is, from 1. */
  nth: number;
  /** When the request arrived (ms since the epoch). */
  start: number;
  /** When its answer was sent, or its connection closed without one; unset while in flight. */
  end?: number;
  /** The status answered; unset when there was no answer. */
  status?: number;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** By default a list page titled with the path. */
  body?: string;
  /** Answers this many ms after the request arrived. */
  delayMs?: number;
  /** Never answers: the request is held until `release()` or `close()`. */
  hold?: boolean;
}

/** What the site answers: told the path, which request of that path it is (from 1) and of the site (from 0). */
export type Route = (path: string, nth: number, index: number) => Answer;

export type HostSite = Awaited<ReturnType<typeof startHostSite>>;

/**
 * A local site answering as `route` says, every request recorded as a `Visit`. Its server runs in
 * a thread (host-site-thread.ts) that times every arrival and answer; `visits` follows it.
 */
export async function startHostSite(route: Route = () => ({})) {
  const visits: Visit[] = [];
  const byId = new Map<number, Visit>();
  const perPath = new Map<string, number>();
  const flight = { now: 0, peak: 0 };
  const thread = new Worker(new URL('./host-site-thread.ts', import.meta.url));
  thread.unref();
  const send = (message: ToThread) => thread.postMessage(message);
  let closed: (() => void) | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    thread.once('error', reject);
    thread.on('message', (message: FromThread) => {
      if (message.type === 'listening') resolve(message.port);
      else if (message.type === 'closed') closed?.();
      else if (message.type === 'arrived') {
        const nth = (perPath.get(message.path) ?? 0) + 1;
        perPath.set(message.path, nth);
        const visit: Visit = { path: message.path, nth, start: message.start };
        visits.push(visit);
        byId.set(message.id, visit);
        Object.assign(flight, { now: message.inFlight, peak: message.peak });
        const answer = route(message.path, nth, visits.length - 1);
        if (answer.hold) send({ type: 'hold', id: message.id });
        else
          send({
            type: 'answer',
            id: message.id,
            status: answer.status ?? 200,
            headers: answer.headers ?? {},
            body: answer.body ?? listPage(message.path, 2),
            delayMs: answer.delayMs ?? 0,
          });
      } else {
        const visit = byId.get(message.id)!;
        byId.delete(message.id);
        visit.end = message.end;
        if (message.status !== undefined) visit.status = message.status;
        flight.now = message.inFlight;
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    visits,
    /** Requests in flight now. */
    inFlight: () => flight.now,
    /** The most requests ever in flight at once. */
    peak: () => flight.peak,
    /** Ends the held requests without an answer. */
    release() {
      send({ type: 'release' });
    },
    async close() {
      await new Promise<void>((resolve) => {
        closed = resolve;
        send({ type: 'close' });
      });
      await thread.terminate();
    },
  };
}

/** The most of `visits` in flight at once, by their recorded times (an end and a start in the same ms do not overlap). */
export function peakOverlap(visits: readonly Visit[]): number {
  const edges = visits.flatMap((v) => [
    { at: v.start, step: 1 },
    { at: v.end ?? Number.POSITIVE_INFINITY, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let peak = 0;
  for (const edge of edges) {
    now += edge.step;
    peak = Math.max(peak, now);
  }
  return peak;
}
