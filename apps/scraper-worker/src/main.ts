import { setFlagsFromString } from 'node:v8';
import { stopOnSignals } from '@scrapejobs/observability';
import { loadWorkerConfig } from './config.ts';
import { createScraperRuntime } from './runtime.ts';

// The old generation may double before V8 collects it again. With the heap cap of the worker's
// start script V8 lets it grow by 1.4× only, which for the worker's ~40 MB of live objects leaves
// less room than its young generation: V8 then starts the next full collection as soon as one
// ends, and spent as much CPU again as the pages themselves (bench/README.md, "A full collection
// after another"). It is set here because NODE_OPTIONS does not take V8's GC flags, so that every
// way of starting the worker gets it; V8 reads it whenever it sets the next limit.
setFlagsFromString('--heap-growing-percent=100');

const config = loadWorkerConfig(process.env);
const runtime = createScraperRuntime(config);
await runtime.start();
// Runs in progress get SHUTDOWN_TIMEOUT_MS to hand themselves back to the queue.
stopOnSignals(() => runtime.stop(), { log: runtime.log, deadlineMs: config.SHUTDOWN_TIMEOUT_MS });
