// An extraction process: one task of a URL taken over after its worker's lease ran out, in a
// process of its own started by the worker that took it over (docs/api.md §16.2).
import module from 'node:module';
import { serveProcessTask } from '@scrapejobs/sandbox';
import type { ThreadSettings, ThreadTask, ThreadValue } from './extractor.ts';

// Every take-over starts one: the code compiled once is read from the disk cache after (half the
// start's CPU). Written before the task, since the process is killed once it answered.
module.enableCompileCache();
const { taskRunner } = await import('./tasks.ts');
module.flushCompileCache();

const { timeLimitMs } = JSON.parse(process.argv[2] ?? '{}') as ThreadSettings;

serveProcessTask<ThreadTask, ThreadValue>(taskRunner(timeLimitMs));
