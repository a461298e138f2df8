import type { Database } from '@scrapejobs/db';
import type { Payload } from '@scrapejobs/queues';
import type { Queue } from 'bullmq';

const GRACE_MS = 60_000;

/**
 * Runs recorded as running whose queue entry is gone (the enqueue after the API's commit
 * failed, or Redis lost data) are queued again; the run id is the queue job id, so a run
 * that is still queued is never added twice.
 */
export async function requeueLostRuns(
  db: Database,
  queue: Queue<Payload<'scrapeRuns'>, unknown, string>,
  now = Date.now(),
): Promise<string[]> {
  const runs = await db.run.findMany({
    where: { status: 'running', startedAt: { lt: new Date(now - GRACE_MS) } },
    select: { id: true, jobId: true },
    take: 500,
  });
  const requeued: string[] = [];
  for (const run of runs) {
    const state = await queue.getJobState(run.id);
    if (state === 'unknown' || state === 'completed' || state === 'failed') {
      if (state !== 'unknown') await queue.remove(run.id);
      await queue.add('run', { runId: run.id, jobId: run.jobId }, { jobId: run.id });
      requeued.push(run.id);
    }
  }
  return requeued;
}
