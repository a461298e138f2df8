// An extraction thread: a job's queries on one page, bounded in time by the extraction library
// and in heap by the pool that runs this thread (it is terminated past either).
import { workerData } from 'node:worker_threads';
import { type CompiledJob, compileJob, decodeHtml, extract } from '@scrapejobs/extraction';
import { serveTasks } from '@scrapejobs/sandbox';
import type { ExtractTask, ThreadSettings } from './extractor.ts';

const { timeLimitMs } = workerData as ThreadSettings;
const CACHED_JOBS = 16;
// Compiled queries by task key, most recently used last.
const compiled = new Map<string, CompiledJob>();

function compiledFor(task: ExtractTask): CompiledJob {
  let job = compiled.get(task.key);
  if (job) compiled.delete(task.key);
  else job = compileJob(task.queries, { timeLimitMs });
  compiled.set(task.key, job);
  if (compiled.size > CACHED_JOBS) compiled.delete(compiled.keys().next().value!);
  return job;
}

serveTasks((task: ExtractTask): string[] => {
  const job = compiledFor(task);
  const { page } = task;
  const html =
    'html' in page
      ? page.html
      : decodeHtml(
          Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength),
          page.contentType,
        );
  return extract(job, html).map((record) => JSON.stringify(record));
});
