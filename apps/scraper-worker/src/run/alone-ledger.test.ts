import { newId } from '@scrapejobs/db';
import { Frontier } from '@scrapejobs/domain';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { AloneLedger } from './alone-ledger.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
const ledger = new AloneLedger(redis, prefix.prefix);
let tdb: TestDatabase;
let frontier: Frontier;

beforeAll(async () => {
  tdb = await createTestDatabase();
  frontier = new Frontier(tdb.db);
});
afterAll(async () => {
  await tdb.drop();
  await prefix.cleanup();
  redis.disconnect();
});

async function runningRun(source: string) {
  const user = await tdb.db.user.create({ data: { id: newId('usr'), email: `${newId('usr')}@example.com` } });
  const jobId = newId('job');
  const runId = newId('run');
  const queries = [{ name: 'title', type: 'css', query: 'h1', join: false }];
  await tdb.db.job.create({
    data: { id: jobId, userId: user.id, mode: 'test', name: 'alone', source, queries, rateLimit: 10 },
  });
  const settings = { source, queries, rate_limit: 10, render_config: null, proxy_config: null, crawl: null };
  await tdb.db.run.create({ data: { id: runId, jobId, trigger: 'manual', settings } });
  await frontier.seed(runId);
  return runId;
}

const expire = () => new Promise((r) => setTimeout(r, 20));

describe('AloneLedger', () => {
  it('spares a URL whose alone extraction ended before its worker died, though the mark could not be cleared', async () => {
    const runId = await runningRun('https://example.com/one');
    await frontier.claim(runId, 1, 1);
    await expire();
    const taken = await frontier.takeOver(runId, 1, (url) => ledger.hasEnded(runId, url));
    await frontier.markAlone(runId, taken!, true);
    // PostgreSQL was unreachable when the extraction ended: only the ledger knows.
    await ledger.ended(runId, taken!);
    await expire();
    const again = await frontier.takeOver(runId, 1, (url) => ledger.hasEnded(runId, url));
    expect(again).toEqual(expect.objectContaining({ crashes: 2, blamed: false }));

    // The ledger speaks for one claim only: a death during the next alone extraction is the URL's.
    await frontier.markAlone(runId, again!, true);
    await expire();
    const third = await frontier.takeOver(runId, 1, (url) => ledger.hasEnded(runId, url));
    expect(third).toEqual(expect.objectContaining({ crashes: 3, blamed: true }));
  });

  it('takes nothing over while the ledger cannot be read, and blames as before once it can', async () => {
    const runId = await runningRun('https://example.com/two');
    await frontier.claim(runId, 1, 1);
    await expire();
    const taken = await frontier.takeOver(runId, 1);
    await frontier.markAlone(runId, taken!, true);
    await expire();
    await expect(
      frontier.takeOver(runId, 1, () => Promise.reject(new Error('Redis unreachable'))),
    ).rejects.toThrow('Redis unreachable');
    const later = await frontier.takeOver(runId, 1, (url) => ledger.hasEnded(runId, url));
    expect(later).toEqual(expect.objectContaining({ crashes: 2, blamed: true }));
  });
});
