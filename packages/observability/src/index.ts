import { createServer, type Server } from 'node:http';
import type { Queue } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A Prometheus registry for one process, with Node's default metrics and a `service` label. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Gauges of queue depth by state and the age of the oldest waiting job, read at scrape time. */
export function registerQueueMetrics(registry: Registry, queues: readonly Queue[]): void {
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in a BullMQ queue by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: queue.name, state }, n);
      }
    },
  });
  new Gauge({
    name: 'queue_oldest_waiting_seconds',
    help: 'Age of the oldest job waiting in a BullMQ queue (0 when none waits).',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const [oldest] = await queue.getJobs(['wait'], -1, -1, true);
        this.set({ queue: queue.name }, oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0);
      }
    },
  });
}

export type Checks = Record<string, 'ok' | 'unreachable'>;

/** A worker process as its main.ts runs it: start, then stop on SIGTERM. */
export interface WorkerRuntime {
  readonly log: ShutdownLog;
  /** Starts its work and its ops port (/metrics, /health, /ready) on METRICS_PORT. */
  start(): Promise<{ metricsPort: number }>;
  /** Takes no more work, lets what is in flight end or go back to the queue, closes everything. */
  stop(): Promise<void>;
}

/**
 * The ops port of a worker: `/metrics` (Prometheus), `/health` (the process answers) and
 * `/ready` (every probe of `ready` answers within 1.5 s; 503 otherwise).
 */
export async function startOpsServer(opts: {
  port: number;
  registry: Registry;
  ready: Record<string, () => Promise<unknown>>;
}): Promise<Server> {
  const readiness = async (): Promise<Checks> =>
    Object.fromEntries(
      await Promise.all(Object.entries(opts.ready).map(async ([name, probe]) => [name, await check(probe)])),
    );
  const server = createServer(async (req, res) => {
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    try {
      if (req.method !== 'GET')
        return send(405, JSON.stringify({ error: 'method_not_allowed', message: 'GET only.' }));
      if (req.url === '/metrics') return send(200, await opts.registry.metrics(), opts.registry.contentType);
      if (req.url === '/health') return send(200, JSON.stringify({ status: 'ok' }));
      if (req.url === '/ready') {
        const checks = await readiness();
        const ok = Object.values(checks).every((c) => c === 'ok');
        return send(
          ok ? 200 : 503,
          JSON.stringify(ok ? { status: 'ready', checks } : { status: 'unavailable', checks }),
        );
      }
      send(404, JSON.stringify({ error: 'not_found', message: 'Unknown path.' }));
    } catch (err) {
      send(500, JSON.stringify({ error: 'internal_error', message: (err as Error).message }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`Cannot serve /metrics on METRICS_PORT ${opts.port}: ${err.message}`)),
    );
    server.listen(opts.port, resolve);
  });
  return server;
}

/** Runs `probe` with a deadline; 'ok' or 'unreachable'. */
export async function check(probe: () => Promise<unknown>, timeoutMs = 1_500): Promise<'ok' | 'unreachable'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

/** What stopOnSignals needs to report: a pino-style logger. */
interface ShutdownLog {
  info(obj: object, msg: string): void;
  warn(msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * A process's graceful end: on SIGTERM or SIGINT, `stop` runs once and the process exits 0; if
 * it fails, or has not finished within `deadlineMs`, the process exits 1.
 */
export function stopOnSignals(
  stop: () => Promise<void>,
  opts: { log: ShutdownLog; deadlineMs: number },
): void {
  let stopping = false;
  const onSignal = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    opts.log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      opts.log.warn('shutdown deadline reached');
      process.exit(1);
    }, opts.deadlineMs);
    deadline.unref();
    try {
      await stop();
      opts.log.info({}, 'stopped');
      process.exit(0);
    } catch (err) {
      opts.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void onSignal('SIGTERM'));
  process.on('SIGINT', () => void onSignal('SIGINT'));
}

/**
 * Runs `task` `ms` milliseconds after its last run ended, without keeping the process alive, so
 * runs never overlap however slow one is (a lease renewal while the database is slow); returns
 * what stops it.
 */
export function repeat(ms: number, task: () => Promise<unknown>, onError: (err: Error) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(() => {
      Promise.resolve()
        .then(task)
        .catch(onError)
        .finally(() => {
          if (!stopped) arm();
        });
    }, ms);
    timer.unref();
  };
  arm();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** A counter on `registry`, with the labels it is counted by. */
export const counter = <L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> => new Counter({ name, help, labelNames, registers: [registry] });

/** A histogram on `registry`, with its buckets and the labels it is observed by. */
export const histogram = <L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  buckets: number[],
  labelNames: readonly L[] = [],
): Histogram<L> => new Histogram({ name, help, buckets, labelNames, registers: [registry] });
