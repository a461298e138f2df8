import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError, SandboxPool, TaskError } from '@scrapejobs/sandbox';

const entry = new URL('../../../test/fixtures/sandbox-thread.ts', import.meta.url);
const pools: SandboxPool<unknown, unknown>[] = [];

function pool(opts: { threads?: number; timeLimitMs?: number; graceMs?: number; memoryMb?: number } = {}) {
  const p = new SandboxPool<unknown, unknown>({
    entry,
    threads: opts.threads ?? 1,
    timeLimitMs: opts.timeLimitMs ?? 2_000,
    graceMs: opts.graceMs ?? 0,
    memoryMb: opts.memoryMb ?? 64,
  });
  pools.push(p);
  return p;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** Largest gap between event-loop turns of this thread while `work` runs. */
async function loopGap<T>(work: Promise<T>): Promise<{ result: PromiseSettledResult<T>; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 10);
  const [result] = await Promise.allSettled([work]);
  clearInterval(timer);
  return { result, gapMs };
}

describe('SandboxPool', () => {
  it('returns what the thread answers, and reuses its threads', async () => {
    const p = pool({ threads: 2 });
    const values = await Promise.all(
      [1, 2, 3, 4].map((n) => p.run(`user${n}`, { kind: 'echo', value: { n } })),
    );
    expect(values).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(p.stats()).toEqual({ busy: 0, queued: 0, threads: 2, started: 2 });
  });

  it('loads a free thread on ready(), once, and the next task runs on it', async () => {
    const p = pool({ threads: 2 });
    await p.ready();
    await p.ready();
    expect(p.stats()).toEqual({ busy: 0, queued: 0, threads: 1, started: 1 });
    expect(await p.run('alice', { kind: 'echo', value: 1 })).toBe(1);
    expect(p.stats().started).toBe(1);
    // Every thread busy and no room for another: nothing to load, nothing to wait for.
    const busy = [p.run('alice', { kind: 'sleep', ms: 300 }), p.run('bob', { kind: 'sleep', ms: 300 })];
    await p.ready();
    expect(p.stats()).toEqual(expect.objectContaining({ busy: 2, threads: 2, started: 2 }));
    await Promise.all(busy);
  });

  it('terminates a thread past its time limit while this thread keeps turning, then serves the next task', async () => {
    const p = pool({ timeLimitMs: 300 });
    const started = Date.now();
    const { result, gapMs } = await loopGap(p.run('alice', { kind: 'spin' }));
    expect(result.status).toBe('rejected');
    const err = (result as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toEqual(
      expect.objectContaining({ limit: 'time', message: 'exceeded its time limit of 300 ms' }),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(gapMs).toBeLessThan(200);
    expect(await p.run('alice', { kind: 'echo', value: 'after' })).toBe('after');
  });

  it("starts a task's clock once its thread's code is loaded, not when the task is sent", async () => {
    const p = new SandboxPool<unknown, unknown>({
      entry: new URL('../../../test/fixtures/slow-sandbox-thread.ts', import.meta.url),
      threads: 1,
      timeLimitMs: 500,
      graceMs: 0,
      memoryMb: 64,
      workerData: { loadMs: 1_000 },
    });
    pools.push(p);
    // Sent at once, while the thread loads for a second: it runs 300 ms of its 500.
    await expect(p.run('alice', { kind: 'sleep', ms: 300 })).resolves.toBe('slept');
    await expect(p.run('alice', { kind: 'spin' })).rejects.toMatchObject({ limit: 'time' });
  });

  it('ends a thread past its heap limit with a memory error, and the process lives on', async () => {
    const ended: string[] = [];
    const p = new SandboxPool<unknown, unknown>({
      entry,
      threads: 1,
      timeLimitMs: 20_000,
      memoryMb: 32,
      onThreadEnd: (limit) => ended.push(limit),
    });
    pools.push(p);
    const rssBefore = process.memoryUsage().rss;
    await expect(p.run('alice', { kind: 'grow' })).rejects.toEqual(
      expect.objectContaining({
        name: 'SandboxError',
        limit: 'memory',
        message: 'exceeded its memory limit of 32 MB',
      }),
    );
    expect(ended).toEqual(['memory']);
    expect(await p.run('alice', { kind: 'echo', value: 1 })).toBe(1);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it("rebuilds a task's own error with its name, message and plain fields", async () => {
    const err = await pool()
      .run('alice', { kind: 'throw', message: 'too many' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskError);
    expect(err).toEqual(expect.objectContaining({ name: 'RangeError', message: 'too many' }));
    expect((err as TaskError).fields).toEqual({ code: 'BAD_INPUT', limit: 'records' });
  });

  it('fails the task of a thread that exits, and replaces the thread', async () => {
    const p = pool();
    await expect(p.run('alice', { kind: 'exit' })).rejects.toEqual(
      expect.objectContaining({ limit: 'crash' }),
    );
    expect(await p.run('alice', { kind: 'echo', value: 'again' })).toBe('again');
  });

  it('takes an aborted task off the queue, or ends the thread running it', async () => {
    const p = pool({ threads: 1, timeLimitMs: 10_000 });
    const running = new AbortController();
    const queued = new AbortController();
    const first = p.run('alice', { kind: 'spin' }, { signal: running.signal });
    const second = p.run('alice', { kind: 'echo', value: 2 }, { signal: queued.signal });
    const third = p.run('alice', { kind: 'echo', value: 3 });
    expect(p.stats()).toEqual({ busy: 1, queued: 2, threads: 1, started: 1 });
    queued.abort(new Error('not needed'));
    await expect(second).rejects.toThrow('not needed');
    running.abort(new Error('paused'));
    await expect(first).rejects.toThrow('paused');
    expect(await third).toBe(3);
  });

  // `abort(0)` and the like: a reason that is falsy must still reject, never resolve undefined.
  const falsyReasons = [0, '', null, false];

  it.each(falsyReasons)(
    'rejects with an AbortError a task aborted with reason %p before it starts',
    async (reason) => {
      const p = pool({ threads: 1, timeLimitMs: 10_000 });
      const running = p.run('alice', { kind: 'sleep', ms: 300 });
      const [ahead, queued, early] = [new AbortController(), new AbortController(), new AbortController()];
      const sentAhead = p.run('alice', { kind: 'echo', value: 'ahead' }, { signal: ahead.signal });
      const waiting = p.run('alice', { kind: 'echo', value: 'queued' }, { signal: queued.signal });
      expect(p.stats()).toEqual({ busy: 1, queued: 2, threads: 1, started: 1 });
      ahead.abort(reason);
      queued.abort(reason);
      early.abort(reason);
      const settled = await Promise.allSettled([
        sentAhead,
        waiting,
        p.run('alice', { kind: 'echo', value: 1 }, { signal: early.signal }),
      ]);
      const aborted = expect.objectContaining({
        name: 'AbortError',
        message: `The task was aborted (${String(reason)})`,
      });
      expect(settled).toEqual(Array(3).fill({ status: 'rejected', reason: aborted }));
      expect(await running).toBe('slept');
    },
  );

  it.each(falsyReasons)(
    'rejects with an AbortError a task aborted with reason %p while it runs',
    async (reason) => {
      const p = pool({ threads: 1, timeLimitMs: 10_000 });
      const controller = new AbortController();
      const spin = p.run('alice', { kind: 'spin' }, { signal: controller.signal });
      await new Promise((r) => setTimeout(r, 50));
      controller.abort(reason);
      await expect(spin).rejects.toEqual(
        expect.objectContaining({ name: 'AbortError', message: `The task was aborted (${String(reason)})` }),
      );
      expect(await p.run('alice', { kind: 'echo', value: 'after' })).toBe('after');
    },
  );

  it('ends a whole queue sharing one aborted signal without starting a thread for any of them', async () => {
    const ended: string[] = [];
    const p = new SandboxPool<unknown, unknown>({
      entry,
      threads: 1,
      timeLimitMs: 10_000,
      memoryMb: 64,
      onThreadEnd: (limit) => ended.push(limit),
    });
    pools.push(p);
    await p.run('alice', { kind: 'echo', value: 'warm' });
    const budget = new AbortController();
    const all = Array.from({ length: 20 }, () =>
      p.run('alice', { kind: 'spin' }, { signal: budget.signal }).catch((e: Error) => e.message),
    );
    await new Promise((r) => setTimeout(r, 100));
    budget.abort(new Error('over budget'));
    expect(await Promise.all(all)).toEqual(Array(20).fill('over budget'));
    // The thread of the running one was ended; none was started for the others.
    expect(p.stats()).toEqual({ busy: 0, queued: 0, threads: 0, started: 1 });
  });

  it('runs no more tasks at once than it has threads', async () => {
    const p = pool({ threads: 2 });
    const all = Promise.all(
      ['alice', 'bob', 'carol'].map((owner) => p.run(owner, { kind: 'sleep', ms: 200 })),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(p.stats()).toEqual({ busy: 2, queued: 1, threads: 2, started: 2 });
    expect(await all).toEqual(['slept', 'slept', 'slept']);
  });

  it("never gives one owner every thread, so another owner's task runs while its slow ones wait", async () => {
    const p = pool({ threads: 3, timeLimitMs: 10_000 });
    const slow = [1, 2, 3, 4].map(() => p.run('alice', { kind: 'sleep', ms: 600 }));
    await new Promise((r) => setTimeout(r, 50));
    expect(p.stats()).toEqual({ busy: 2, queued: 2, threads: 2, started: 2 });
    const started = Date.now();
    expect(await p.run('bob', { kind: 'echo', value: 'bob' })).toBe('bob');
    expect(Date.now() - started).toBeLessThan(400);
    expect(await Promise.all(slow)).toEqual(['slept', 'slept', 'slept', 'slept']);
  });

  it('gives a free thread to the waiting owner that runs the fewest tasks, before older tasks', async () => {
    const p = pool({ threads: 4, timeLimitMs: 10_000 });
    const order: string[] = [];
    const track = (owner: string, ms: number, tag: string) =>
      p.run(owner, { kind: 'sleep', ms }).then(() => order.push(tag));
    const all = [
      track('alice', 500, 'alice long 1'),
      track('alice', 500, 'alice long 2'),
      track('bob', 500, 'bob long'),
      track('carol', 100, 'carol short'),
    ];
    await new Promise((r) => setTimeout(r, 30));
    // Both wait; when carol's thread frees, bob (one running) goes before alice (two running).
    all.push(track('alice', 10, 'alice queued'), track('bob', 10, 'bob queued'));
    await Promise.all(all);
    expect(order.slice(0, 2)).toEqual(['carol short', 'bob queued']);
  });

  it("sends an owner's next task ahead while it holds all its threads: the thread starts it while this event loop is busy", async () => {
    const p = pool({ threads: 1 });
    const first = p.run('alice', { kind: 'sleep', ms: 100 });
    const next = p.run('alice', { kind: 'now' });
    expect(p.stats()).toEqual({ busy: 1, queued: 1, threads: 1, started: 1 });
    const busyUntil = Date.now() + 400;
    while (Date.now() < busyUntil); // this thread's event loop hears of nothing meanwhile
    expect(await first).toBe('slept');
    expect(await next).toBeLessThan(busyUntil);
  });

  it('answers every one of many tasks of one owner, sent ahead in turn, in order', async () => {
    const p = pool({ threads: 2 });
    const values = Array.from({ length: 200 }, (_, n) => n);
    expect(await Promise.all(values.map((n) => p.run('alice', { kind: 'echo', value: n })))).toEqual(values);
  });

  it('takes tasks sent ahead back as soon as another owner waits, so the free thread goes to the owner running fewest', async () => {
    const p = pool({ threads: 3, timeLimitMs: 10_000 });
    const order: string[] = [];
    const track = (owner: string, task: unknown, tag: string) =>
      p.run(owner, task).then(() => order.push(tag));
    const all = [
      track('alice', { kind: 'sleep', ms: 200 }, 'alice 1'),
      track('alice', { kind: 'sleep', ms: 600 }, 'alice 2'),
      track('alice', { kind: 'echo', value: 3 }, 'alice 3'),
      track('bob', { kind: 'sleep', ms: 600 }, 'bob'),
    ];
    await new Promise((r) => setTimeout(r, 50));
    expect(p.stats()).toEqual({ busy: 3, queued: 1, threads: 3, started: 3 });
    all.push(track('carol', { kind: 'echo', value: 'c' }, 'carol'));
    await Promise.all(all);
    // Alice's third task had been sent ahead to her first thread; it went back, and carol (running
    // none) took that thread when it freed, before alice (running one).
    expect(order.slice(0, 3)).toEqual(['alice 1', 'carol', 'alice 3']);
  });

  it('runs a task sent ahead on a new thread when its thread is ended for the task before it', async () => {
    const p = pool({ threads: 1, timeLimitMs: 300 });
    const spin = p.run('alice', { kind: 'spin' });
    const next = p.run('alice', { kind: 'echo', value: 'next' });
    await expect(spin).rejects.toEqual(expect.objectContaining({ limit: 'time' }));
    expect(await next).toBe('next');
    expect(p.stats()).toEqual({ busy: 0, queued: 0, threads: 1, started: 2 });
  });

  it('refuses tasks once closed, failing those still waiting', async () => {
    const p = pool({ threads: 1 });
    const busy = expect(p.run('alice', { kind: 'sleep', ms: 1_000 })).rejects.toThrow('closed');
    const waiting = expect(p.run('alice', { kind: 'echo', value: 1 })).rejects.toThrow('closed');
    await p.close();
    await Promise.all([busy, waiting]);
    await expect(p.run('alice', { kind: 'echo', value: 1 })).rejects.toThrow('closed');
  });

  it('keeps its process alive while a task runs, and not once its threads are idle', () => {
    const script = join(mkdtempSync(join(tmpdir(), 'sandbox-')), 'script.mjs');
    writeFileSync(
      script,
      `import { SandboxPool } from ${JSON.stringify(new URL('./index.ts', import.meta.url).href)};
      const pool = new SandboxPool({ entry: new URL(${JSON.stringify(entry.href)}), threads: 1, timeLimitMs: 5000, memoryMb: 64 });
      pool.run('alice', { kind: 'sleep', ms: 300 }).then((v) => console.log(v));`,
    );
    const child = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 10_000 });
    expect({ out: child.stdout.trim(), err: child.stderr }).toEqual({ out: 'slept', err: '' });
    expect(child.status).toBe(0);
  });
});
