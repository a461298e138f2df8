import { setFlagsFromString } from 'node:v8';
import { stopOnSignals } from '@scrapejobs/observability';
import { loadWorkerConfig } from './config.ts';
import { createScraperRuntime } from './runtime.ts';

// Two V8 settings for the worker's way of using memory (bench/README.md, "A full collection after
// another"), set here because NODE_OPTIONS does not take V8's GC flags, so that every way of
// starting the worker gets them; V8 reads them at each collection.
// - The old generation may double before the next full collection. With the heap cap of the
//   worker's start script V8 lets it grow by 1.4x only, which for the ~40 MB of live objects of
//   the main thread leaves less room than its young generation: the next full collection then
//   started as soon as one ended, and cost as much CPU again as the pages themselves.
// - No allocation site is moved to the old generation. An extraction thread builds a page's
//   whole tree and drops it; once V8 decided to allocate some of its objects old, the young ones
//   they point to outlived every young collection, and the thread ran a full collection every
//   ~100 ms for the rest of the process's life (one worker start in five, at random).
setFlagsFromString('--heap-growing-percent=100');
setFlagsFromString('--no-allocation-site-pretenuring');

const config = loadWorkerConfig(process.env);
const runtime = createScraperRuntime(config);
await runtime.start();
// Runs in progress get SHUTDOWN_TIMEOUT_MS to hand themselves back to the queue.
stopOnSignals(() => runtime.stop(), { log: runtime.log, deadlineMs: config.SHUTDOWN_TIMEOUT_MS });
