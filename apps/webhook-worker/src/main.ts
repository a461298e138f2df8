import { stopOnSignals } from '@scrapejobs/observability';
import { loadWebhookWorkerConfig } from './config.ts';
import { createWebhookRuntime } from './runtime.ts';

const config = loadWebhookWorkerConfig(process.env);
const runtime = createWebhookRuntime(config);
await runtime.start();
// Attempts in flight get SHUTDOWN_TIMEOUT_MS; one still running then is retried by another worker.
stopOnSignals(() => runtime.stop(), { log: runtime.log, deadlineMs: config.SHUTDOWN_TIMEOUT_MS });
