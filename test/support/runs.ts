import { type Database, newId } from '@scrapejobs/db';

/** A running run of a new job of `userId` over `totalUrls` URLs, as POST run leaves it. */
export async function runningRun(db: Database, userId: string, totalUrls: number) {
  const jobId = newId('job');
  const runId = newId('run');
  await db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'store',
      source: 'https://example.com/[1-9]',
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      rateLimit: 10,
      status: 'running',
      lastRunId: runId,
    },
  });
  await db.run.create({ data: { id: runId, jobId, trigger: 'manual', totalUrls } });
  return { jobId, runId };
}
