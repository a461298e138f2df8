import { stopOnSignals } from '@scrapejobs/observability';
import { loadApiConfig } from './config.ts';
import { createApiRuntime } from './runtime.ts';

const config = loadApiConfig(process.env);
const runtime = createApiRuntime(config);
await runtime.start();
// Requests in flight get SHUTDOWN_TIMEOUT_MS; closing the queues and pools a few seconds more.
stopOnSignals(() => runtime.stop(), { log: runtime.log, deadlineMs: config.SHUTDOWN_TIMEOUT_MS + 5_000 });
