/**
 * Preloaded into the worker by bench/fleet.ts (`NODE_OPTIONS=--import bench/fleet-memwatch.ts`),
 * without touching the app: every 250 ms appends one JSON line to $BENCH_MEMWATCH_FILE with
 * process.memoryUsage() (MiB) and the event-loop delay (p50/p99/max ms) of that interval, so the
 * benchmark can say what the worker's peak RSS is made of and how starved its event loop was.
 * `live_heap` is heapUsed read right after the latest major (mark-compact) GC of the interval: an
 * estimate of the live set, where heap_used also counts garbage not yet collected.
 */
import { appendFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.BENCH_MEMWATCH_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  let liveHeap = 0;
  let majorGcs = 0;
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration;
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        majorGcs++;
        liveHeap = Math.max(liveHeap, process.memoryUsage().heapUsed);
      }
    }
  }).observe({ entryTypes: ['gc'] });
  const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(
      file,
      `${JSON.stringify({
        t: Date.now(),
        rss: mib(m.rss),
        heap_total: mib(m.heapTotal),
        heap_used: mib(m.heapUsed),
        external: mib(m.external),
        array_buffers: mib(m.arrayBuffers),
        loop_p50_ms: Math.round(h.percentile(50) / 1e5) / 10,
        loop_p99_ms: Math.round(h.percentile(99) / 1e5) / 10,
        loop_max_ms: Math.round(h.max / 1e5) / 10,
        live_heap: liveHeap ? mib(liveHeap) : null,
        major_gcs: majorGcs,
        gc_ms: Math.round(gcMs),
      })}\n`,
    );
    h.reset();
    liveHeap = 0;
    majorGcs = 0;
    gcMs = 0;
  }, 250);
  timer.unref();
}
