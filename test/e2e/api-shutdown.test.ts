import { request as httpRequest, type IncomingMessage } from 'node:http';
import { newId } from '@scrapejobs/db';
import { KeysService } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { startApp } from '../support/processes.ts';
import { insertResults } from '../support/records.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';

let tdb: TestDatabase;
const prefix = testPrefix();
/** Rows of about 800 bytes: 3 MB, more than the sockets between the API and the test hold. */
const ROWS = 4_000;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
  await prefix.cleanup();
});

async function seedJobWithResults(userId: string) {
  const jobId = newId('job');
  const runId = newId('run');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'big',
      source: 'https://example.com/',
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      rateLimit: 10,
      status: 'success',
    },
  });
  await tdb.db.run.create({
    data: { id: runId, jobId, status: 'success', trigger: 'manual', finishedAt: new Date() },
  });
  const now = new Date();
  await insertResults(
    tdb.db,
    runId,
    Array.from({ length: ROWS }, (_, i) => ({
      url: `https://example.com/${i}`,
      data: { title: `Title number ${i} ${'x'.repeat(800)}` },
      scrapedAt: now,
    })),
  );
  return jobId;
}

describe('API process shutdown', () => {
  it('on SIGTERM finishes a request in flight, refuses new connections and exits 0', async () => {
    const { token, userId } = await new KeysService(tdb.db).create({
      email: 'down@example.com',
      mode: 'test',
      scopes: ['jobs:read'],
      name: 'd',
    });
    const jobId = await seedJobWithResults(userId);
    const api = startApp('api', { DATABASE_URL: tdb.url, REDIS_URL, QUEUE_PREFIX: prefix.prefix, PORT: '0' });
    const port = (await api.waitForLog((l) => l.msg === 'api listening')).port as number;

    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      httpRequest(
        { port, path: `/jobs/${jobId}/download?format=json`, headers: { Authorization: `Bearer ${token}` } },
        resolve,
      )
        .on('error', reject)
        .end();
    });
    expect(response.statusCode).toBe(200);
    // Take the first chunk, then stop reading, so the download is still in flight at SIGTERM.
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve) =>
      response.on('data', (c: Buffer) => {
        chunks.push(c);
        if (chunks.length === 1) {
          response.pause();
          resolve();
        }
      }),
    );
    api.child.kill('SIGTERM');
    await api.waitForLog((l) => String(l.msg).startsWith('shutting down'));
    const refused = await fetch(`http://127.0.0.1:${port}/health`).then(
      () => false,
      () => true,
    );
    expect(refused).toBe(true);
    // Still writing the download: the process waits for it.
    expect(api.child.exitCode).toBeNull();

    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    const rows = JSON.parse(Buffer.concat(chunks).toString()) as { url: string }[];
    expect(rows).toHaveLength(ROWS);
    expect(rows.at(-1)!.url).toBe(`https://example.com/${ROWS - 1}`);
    expect(await api.exited).toBe(0);
  }, 60_000);
});
