import { stopOnSignals } from '@scrapejobs/observability';
import { loadWorkerConfig } from './config.ts';
import { createScraperRuntime } from './runtime.ts';

const config = loadWorkerConfig(process.env);
const runtime = createScraperRuntime(config);
await runtime.start();
// Runs in progress get SHUTDOWN_TIMEOUT_MS to hand themselves back to the queue.
stopOnSignals(() => runtime.stop(), { log: runtime.log, deadlineMs: config.SHUTDOWN_TIMEOUT_MS });
