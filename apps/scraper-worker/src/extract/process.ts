// An extraction process: one task of a URL taken over after its worker's lease ran out, in a
// process of its own started by the worker that took it over (docs/api.md §16b).
import { serveProcessTask } from '@scrapejobs/sandbox';
import type { ThreadSettings, ThreadTask, ThreadValue } from './extractor.ts';
import { taskRunner } from './tasks.ts';

const { timeLimitMs } = JSON.parse(process.argv[2] ?? '{}') as ThreadSettings;

serveProcessTask<ThreadTask, ThreadValue>(taskRunner(timeLimitMs));
