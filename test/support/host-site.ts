// A target site that keeps the time line of its requests, for the tests of politeness toward
// target hosts (docs/api.md §19): when each request arrived and when its answer went out, and how
// many were in flight at once.
import type { ServerResponse } from 'node:http';
import { listPage, startSite } from './site.ts';

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
  /** Answers this many ms late. */
  delayMs?: number;
  /** Never answers: the request is held until `release()` or `close()`. */
  hold?: boolean;
}

/** What the site answers: told the path, which request of that path it is (from 1) and of the site (from 0). */
export type Route = (path: string, nth: number, index: number) => Answer;

export type HostSite = Awaited<ReturnType<typeof startHostSite>>;

/** A local site answering as `route` says, every request recorded as a `Visit`. */
export async function startHostSite(route: Route = () => ({})) {
  const visits: Visit[] = [];
  const perPath = new Map<string, number>();
  const held: ServerResponse[] = [];
  const flight = { now: 0, peak: 0 };
  const site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const nth = (perPath.get(path) ?? 0) + 1;
    perPath.set(path, nth);
    const visit: Visit = { path, nth, start: Date.now() };
    visits.push(visit);
    flight.now++;
    flight.peak = Math.max(flight.peak, flight.now);
    const over = () => {
      if (visit.end !== undefined) return;
      visit.end = Date.now();
      flight.now--;
    };
    res.on('close', over);
    const answer = route(path, nth, visits.length - 1);
    if (answer.hold) {
      held.push(res);
      return true;
    }
    const send = () => {
      if (res.destroyed) return;
      visit.status = answer.status ?? 200;
      res.statusCode = visit.status;
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
      // Counted as over once sent: its client cannot have read it any earlier.
      over();
      res.end(answer.body ?? listPage(path, 2));
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
    return true;
  });
  return {
    url: site.url,
    port: site.port,
    visits,
    /** Requests in flight now. */
    inFlight: () => flight.now,
    /** The most requests ever in flight at once. */
    peak: () => flight.peak,
    /** Ends the held requests without an answer. */
    release() {
      for (const res of held.splice(0)) res.destroy();
    },
    close() {
      for (const res of held.splice(0)) res.destroy();
      return site.close();
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
