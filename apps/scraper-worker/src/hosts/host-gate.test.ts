import { Redis } from 'ioredis';
import { countScriptCalls, REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import {
  HostGate,
  HostGateClosedError,
  type HostGateOptions,
  type HostLimits,
  type HostObserver,
  type HostPlace,
} from './index.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
const connections: Redis[] = [redis];
let gates: HostGate[] = [];
let fleets = 0;

afterEach(async () => {
  await Promise.allSettled(gates.map((gate) => gate.close()));
  gates = [];
});
afterAll(async () => {
  await prefix.cleanup();
  // QUIT closes at once; a disconnect leaves a timer behind while the socket winds down.
  await Promise.allSettled(connections.map((connection) => connection.quit()));
});

const LIMITS: HostLimits = { maxConcurrency: 2, maxPerSecond: 0, retryAfterCapMs: 600_000, leaseMs: 3_000 };
const HOST = 'site.test:443';
const never = new AbortController().signal;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A worker process of the fleet: a gate with connections of its own. */
function worker(
  fleet: string,
  limits: Partial<HostLimits>,
  observer?: HostObserver,
  options?: HostGateOptions,
) {
  const [own, subscriber] = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
  connections.push(own, subscriber);
  const gate = new HostGate(own, subscriber, fleet, { ...LIMITS, ...limits }, observer, options);
  gates.push(gate);
  return { gate, own, subscriber };
}

type Gates<N extends number, G extends HostGate[] = []> = G['length'] extends N
  ? G
  : Gates<N, [...G, HostGate]>;

/** `count` workers sharing a prefix of their own, so that no other test's hosts are seen. */
function fleet<N extends number>(count: N, limits: Partial<HostLimits> = {}, observer?: HostObserver) {
  const name = `${prefix.prefix}:${fleets++}`;
  const gates = Array.from({ length: count }, () => worker(name, limits, observer).gate);
  return { name, gates: gates as Gates<N> };
}

function observed() {
  const seen = { waits: 0, backoffs: [] as string[] };
  const observer: HostObserver = {
    waited: () => seen.waits++,
    backoff: (reason) => seen.backoffs.push(reason),
  };
  return { seen, observer };
}

function granted(outcome: HostPlace | { retryAt: number }): HostPlace {
  if ('retryAt' in outcome) throw new Error(`no place; retry at ${outcome.retryAt}`);
  return outcome;
}

function refused(outcome: HostPlace | { retryAt: number }): number {
  if (!('retryAt' in outcome)) throw new Error('a place was given');
  return outcome.retryAt;
}

async function until(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

/** How long the host stays paused, as a refused try of another gate says. */
async function pauseLeft(gate: HostGate, host = HOST): Promise<number> {
  return refused(await gate.acquire(host, 'usr_probe', never, 0)) - Date.now();
}

/** Within `ms`: never longer, and shorter only by the time taken since it was set. */
function expectPause(left: number, ms: number): void {
  expect(left).toBeLessThanOrEqual(ms + 20);
  expect(left).toBeGreaterThan(ms - 500);
}

describe('HostGate', () => {
  it('never lets more requests into a host than its limit, with three workers and three users', async () => {
    const { name, gates: workers } = fleet(3, { maxConcurrency: 3 });
    let inFlight = 0;
    let most = 0;
    let done = 0;
    const request = async (gate: HostGate, user: string) => {
      const place = granted(await gate.acquire(HOST, user, never, 60_000));
      // Counted from the grant to the release: never more than Redis holds.
      most = Math.max(most, ++inFlight);
      await sleep(2 + Math.random() * 8);
      inFlight--;
      await place.release({ status: 200 });
      done++;
    };
    await Promise.all(
      workers.flatMap((gate) =>
        ['usr_a', 'usr_b', 'usr_c'].flatMap((user) => Array.from({ length: 15 }, () => request(gate, user))),
      ),
    );
    expect(done).toBe(135);
    expect(most).toBe(3);

    // Nothing is left behind: no one waits, no place is held, and every key expires.
    await Promise.all(workers.map((gate) => gate.close()));
    const keys = await redis.keys(`${name}:*`);
    expect(keys.filter((key) => /:(places|queue|seen)$/.test(key))).toEqual([]);
    for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
  });

  it('keeps hosts apart: a full or paused host holds up no other, and a port makes another host', async () => {
    const {
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 1 });
    granted(await a.acquire('one.test:80', 'usr_a', never, 0));
    await granted(await a.acquire('two.test:80', 'usr_a', never, 0)).release({
      status: 429,
      retryAfter: '60',
    });

    refused(await b.acquire('one.test:80', 'usr_b', never, 0));
    refused(await b.acquire('two.test:80', 'usr_b', never, 0));
    granted(await b.acquire('one.test:8080', 'usr_b', never, 0));
    granted(await b.acquire('three.test:80', 'usr_b', never, 0));
  });

  it("pauses every worker's requests to a host for a 429's Retry-After in seconds", async () => {
    const { seen, observer } = observed();
    const {
      gates: [a, b, c],
    } = fleet(3, { maxConcurrency: 4 }, observer);
    const before = Date.now();
    await granted(await a.acquire(HOST, 'usr_a', never, 0)).release({ status: 429, retryAfter: '1' });
    expect(seen.backoffs).toEqual(['429']);

    // A wait shorter than the pause is told at once when the pause ends.
    const retryAt = refused(await b.acquire(HOST, 'usr_b', never, 300));
    expect(retryAt).toBeGreaterThanOrEqual(before + 990);
    expect(retryAt).toBeLessThanOrEqual(Date.now() + 1_010);

    const startedAt = await Promise.all(
      [a, b, c].map(async (gate) => {
        const place = granted(await gate.acquire(HOST, 'usr_c', never, 10_000));
        const at = Date.now();
        await place.release({ status: 200 });
        return at;
      }),
    );
    for (const at of startedAt) expect(at).toBeGreaterThanOrEqual(before + 990);
    expect(seen.waits).toBe(4);
  });

  it('pauses a host until the HTTP date of a Retry-After', async () => {
    const {
      gates: [a, b],
    } = fleet(2);
    const before = Date.now();
    const date = new Date(before + 2_000).toUTCString(); // whole seconds: 1 to 2 s from now
    await granted(await a.acquire(HOST, 'usr_a', never, 0)).release({ status: 503, retryAfter: date });
    const ends = Date.parse(date);
    const retryAt = refused(await b.acquire(HOST, 'usr_b', never, 0));
    expect(retryAt).toBeGreaterThanOrEqual(ends - 20);
    expect(retryAt).toBeLessThanOrEqual(ends + 500);
    granted(await b.acquire(HOST, 'usr_b', never, 10_000));
    expect(Date.now()).toBeGreaterThanOrEqual(ends - 10);
  });

  it('doubles the pause with each 503 in a row, and a success starts the row again', async () => {
    const { seen, observer } = observed();
    const {
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 8 }, observer);
    const places = await Promise.all(
      Array.from({ length: 5 }, async () => granted(await a.acquire(HOST, 'usr_a', never, 0))),
    );
    await places[0]!.release({ status: 503 });
    expectPause(await pauseLeft(b), 1_000);
    await places[1]!.release({ status: 503 });
    expectPause(await pauseLeft(b), 2_000);
    await places[2]!.release({ status: 503 });
    expectPause(await pauseLeft(b), 4_000);
    // A success does not lift the pause, but the next 503 pauses for 1 s (not 8), and a pause
    // never shortens a longer one.
    await places[3]!.release({ status: 200 });
    expectPause(await pauseLeft(b), 4_000);
    await places[4]!.release({ status: 503 });
    expectPause(await pauseLeft(b), 4_000);
    expect(seen.backoffs).toEqual(['503', '503', '503', '503']);
  });

  it('caps a Retry-After at retryAfterCapMs and the doubling at 60 s', async () => {
    const {
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 8, retryAfterCapMs: 2_000 });
    await granted(await a.acquire('told.test:80', 'usr_a', never, 0)).release({
      status: 429,
      retryAfter: '3600',
    });
    expectPause(await pauseLeft(b, 'told.test:80'), 2_000);

    const places = await Promise.all(
      Array.from({ length: 8 }, async () => granted(await a.acquire('down.test:80', 'usr_a', never, 0))),
    );
    // 1, 2, 4, 8, 16, 32, then 60 s rather than 64 and 128.
    for (const place of places) await place.release({ status: 503 });
    expectPause(await pauseLeft(b, 'down.test:80'), 60_000);
  });

  it("gives a dead worker's places back once their lease runs out, and not before", async () => {
    const name = `${prefix.prefix}:${fleets++}`;
    const limits = { maxConcurrency: 2, leaseMs: 600 };
    const alive = worker(name, limits).gate;
    const doomed = worker(name, limits);
    granted(await doomed.gate.acquire(HOST, 'usr_a', never, 0));
    granted(await doomed.gate.acquire(HOST, 'usr_a', never, 0));

    // Renewed, its places outlive their lease.
    await sleep(1_000);
    refused(await alive.acquire(HOST, 'usr_b', never, 0));

    // Killed: it renews nothing and gives nothing back.
    doomed.own.disconnect();
    doomed.subscriber.disconnect();
    const killed = Date.now();
    granted(await alive.acquire(HOST, 'usr_b', never, 5_000));
    expect(Date.now() - killed).toBeGreaterThanOrEqual(300);
    granted(await alive.acquire(HOST, 'usr_b', never, 5_000));
  });

  it('spaces the starts at a host maxPerSecond apart across workers, banking no unused time', async () => {
    const { gates: workers } = fleet(3, { maxConcurrency: 8, maxPerSecond: 10 });
    const starts: number[] = [];
    const start = async (gate: HostGate, user: string) => {
      const place = granted(await gate.acquire(HOST, user, never, 30_000));
      starts.push(Date.now());
      await place.release({ status: 200 });
    };
    await Promise.all(workers.flatMap((gate, i) => Array.from({ length: 4 }, () => start(gate, `usr_${i}`))));
    starts.sort((x, y) => x - y);
    expect(starts).toHaveLength(12);
    // One start every 100 ms: any second holds 10 (one more when a timer fires late).
    const perWindow = starts.map((t) => starts.filter((u) => u >= t && u < t + 1_000).length);
    expect(Math.max(...perWindow)).toBeLessThanOrEqual(11);
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(11 * 95);

    // Idle time is not saved up for a burst.
    await sleep(500);
    starts.length = 0;
    await Promise.all([
      start(workers[0]!, 'usr_a'),
      start(workers[1]!, 'usr_b'),
      start(workers[2]!, 'usr_c'),
    ]);
    starts.sort((x, y) => x - y);
    expect(starts[2]! - starts[0]!).toBeGreaterThanOrEqual(2 * 90);
  });

  it("gives a user's single request the next place freed, however many another user has waiting", async () => {
    const { name, gates: crowd } = fleet(3, { maxConcurrency: 2 });
    let bWaits = () => {};
    const bWaiting = new Promise<void>((resolve) => {
      bWaits = resolve;
    });
    const lone = worker(name, { maxConcurrency: 2 }, { waited: () => bWaits(), backoff: () => {} }).gate;

    const grants: string[] = [];
    const held: HostPlace[] = [];
    const ask = (gate: HostGate, user: string) =>
      gate.acquire(HOST, user, never, 60_000).then((outcome) => {
        grants.push(user);
        held.push(granted(outcome));
      });
    const all = Array.from({ length: 40 }, (_, i) => ask(crowd[i % 3]!, 'usr_a'));
    await until(() => held.length === 2);
    all.push(ask(lone, 'usr_b'));
    await bWaiting;
    const joined = grants.length;

    // Requests end one at a time; each frees one place.
    const endOne = async () => {
      const count = grants.length;
      await held.shift()!.release({ status: 200 });
      await until(() => grants.length > count);
    };
    while (!grants.includes('usr_b')) await endOne();
    expect(grants.indexOf('usr_b') - joined).toBeLessThanOrEqual(1);

    // Two users with many waiting each take turns.
    for (let i = 0; i < 10; i++) all.push(ask(crowd[i % 3]!, 'usr_c'));
    await until(() => held.length === 2);
    await sleep(300); // every worker's usr_c waits now, not only the first to ask
    const from = grants.length;
    for (let i = 0; i < 12; i++) await endOne();
    const turns = grants.slice(from).join(' ');
    expect(turns).not.toContain('usr_a usr_a usr_a');
    expect(turns).not.toContain('usr_c usr_c usr_c');

    while (grants.length < 51 || held.length > 0) {
      const place = held.shift();
      if (place) await place.release({ status: 200 });
      else await sleep(5);
    }
    await Promise.all(all);
  });

  it('wakes the waiters of every worker when a place is freed, without waiting for a poll', async () => {
    const name = `${prefix.prefix}:${fleets++}`;
    const slow = { pollMs: 60_000 };
    const a = worker(name, { maxConcurrency: 1 }, undefined, slow).gate;
    const b = worker(name, { maxConcurrency: 1 }, undefined, slow).gate;
    for (;;) {
      const [, listeners] = (await redis.pubsub('NUMSUB', `${name}:host-freed`)) as [string, number];
      if (listeners === 2) break;
      await sleep(10);
    }
    const holder = granted(await a.acquire(HOST, 'usr_a', never, 0));
    const waiting = b.acquire(HOST, 'usr_b', never, 120_000);
    await sleep(50); // refused once: its next poll is a minute away
    await holder.release({ status: 200 });
    let timer: NodeJS.Timeout | undefined;
    const asleep = new Promise<'asleep'>((resolve) => {
      timer = setTimeout(() => resolve('asleep'), 10_000);
    });
    const woken = await Promise.race([waiting, asleep]);
    clearTimeout(timer);
    expect(woken).not.toBe('asleep');
    granted(woken as HostPlace);
  });

  it('announces a freed place only while someone waits for one', async () => {
    const name = `${prefix.prefix}:${fleets++}`;
    const slow = { pollMs: 60_000 };
    const a = worker(name, { maxConcurrency: 1 }, undefined, slow).gate;
    const b = worker(name, { maxConcurrency: 1 }, undefined, slow).gate;
    const listener = new Redis(REDIS_URL);
    connections.push(listener);
    const heard: string[] = [];
    listener.on('message', (_channel: string, host: string) => heard.push(host));
    await listener.subscribe(`${name}:host-freed`);
    // Nobody waits: the release tells no worker.
    await granted(await a.acquire(HOST, 'usr_a', never, 0)).release({ status: 200 });
    const holder = granted(await a.acquire(HOST, 'usr_a', never, 0));
    // A ping answered after the releases' messages would have been delivered.
    await listener.ping();
    expect(heard).toEqual([]);
    const waiting = b.acquire(HOST, 'usr_b', never, 120_000);
    await sleep(50); // refused once: its next poll is a minute away
    await holder.release({ status: 200 });
    granted(await waiting);
    await until(() => heard.length === 1);
    expect(heard).toEqual([HOST]);
  });

  it("asks Redis for only the oldest of a user's waiters in a process", async () => {
    const name = `${prefix.prefix}:${fleets++}`;
    const { gate, own } = worker(name, { maxConcurrency: 1 });
    const holder = granted(await gate.acquire(HOST, 'usr_a', never, 0));
    const asks = countScriptCalls(own);
    const waits = Array.from({ length: 30 }, () => gate.acquire(HOST, 'usr_b', never, 60_000));
    await sleep(500);
    // About one ask per poll (200 ms), not one per waiter.
    expect(asks()).toBeGreaterThanOrEqual(1);
    expect(asks()).toBeLessThan(12);
    await holder.release({ status: 200 });
    for (const wait of waits) await granted(await wait).release({ status: 200 });
  });

  it('tells a caller whose wait runs out when to come back, and leaves nothing of that wait', async () => {
    const { seen, observer } = observed();
    const {
      name,
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 1 }, observer);
    // usr_y has had a place; usr_z holds the only one.
    await granted(await a.acquire(HOST, 'usr_y', never, 0)).release({ status: 200 });
    const holder = granted(await a.acquire(HOST, 'usr_z', never, 0));
    expect(seen.waits).toBe(0);

    const asked = Date.now();
    const [first, second] = await Promise.all([
      b.acquire(HOST, 'usr_x', never, 300),
      b.acquire(HOST, 'usr_x', never, 100),
    ]);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(290);
    expect(refused(first)).toBeGreaterThanOrEqual(Date.now());
    expect(refused(second)).toBeGreaterThanOrEqual(asked + 100);
    expect(seen.waits).toBe(2);
    expect((await redis.keys(`${name}:*`)).filter((key) => /:(queue|seen)$/.test(key))).toEqual([]);

    // usr_x no longer waits, so the place freed goes to usr_y, who had its turn already.
    await holder.release({ status: 200 });
    granted(await a.acquire(HOST, 'usr_y', never, 0));
  });

  it('rejects an aborted wait with its reason, and the request behind it takes the place', async () => {
    const {
      gates: [a],
    } = fleet(1, { maxConcurrency: 1 });
    const holder = granted(await a.acquire(HOST, 'usr_a', never, 0));
    const controller = new AbortController();
    const first = a.acquire(HOST, 'usr_a', controller.signal, 60_000);
    const second = a.acquire(HOST, 'usr_a', never, 60_000);
    await sleep(50);
    controller.abort(new Error('cancelled'));
    await expect(first).rejects.toThrow('cancelled');
    await holder.release({ status: 200 });
    granted(await second);
    await expect(a.acquire(HOST, 'usr_b', AbortSignal.abort('gone'), 1_000)).rejects.toBe('gone');
  });

  it('gives back the places of a gate that closes, and rejects its waits', async () => {
    const {
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 1 });
    granted(await a.acquire(HOST, 'usr_a', never, 0));
    const waiting = a.acquire(HOST, 'usr_a', never, 60_000);
    const other = b.acquire(HOST, 'usr_b', never, 60_000);
    await sleep(50);
    await a.close();
    await expect(waiting).rejects.toBeInstanceOf(HostGateClosedError);
    granted(await other);
    await expect(a.acquire(HOST, 'usr_a', never, 0)).rejects.toBeInstanceOf(HostGateClosedError);
  });

  it('counts the hosts paused now, fleet-wide', async () => {
    const {
      gates: [a, b],
    } = fleet(2, { maxConcurrency: 4 });
    expect(await b.pausedHosts()).toBe(0);
    await granted(await a.acquire('short.test:80', 'usr_a', never, 0)).release({
      status: 429,
      retryAfter: '1',
    });
    await granted(await a.acquire('long.test:80', 'usr_a', never, 0)).release({
      status: 503,
      retryAfter: '60',
    });
    await granted(await a.acquire('fine.test:80', 'usr_a', never, 0)).release({ status: 200 });
    await granted(await a.acquire('gone.test:80', 'usr_a', never, 0)).release({ status: null });
    await granted(await a.acquire('now.test:80', 'usr_a', never, 0)).release({
      status: 429,
      retryAfter: '0',
    });
    expect(await b.pausedHosts()).toBe(2);
    granted(await b.acquire('now.test:80', 'usr_b', never, 0));
    await sleep(1_100);
    expect(await b.pausedHosts()).toBe(1);
  });
});
