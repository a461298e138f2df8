import { urlKey } from '@scrapejobs/crawl';
import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { type Client, validJob } from '../../../../test/support/client.ts';

// The job field `refetch` (docs/api.md §20) through the API; what runs keep and copy is tested in
// packages/domain runs/unchanged.test.ts.

let f: ApiFixture;
let alice: Client;

beforeAll(async () => {
  f = await apiFixture();
  alice = await f.keyClient('refetch@example.com');
});

afterAll(async () => {
  await f.close();
});

/** A validators row of the job, as a run that fetched `url` keeps it. */
async function keepValidators(jobId: string, url: string): Promise<void> {
  await f.tdb.db.pageValidators.create({
    data: {
      jobId,
      urlKey: new Uint8Array(urlKey('page', url)),
      etag: '"1"',
      bodyHash: new Uint8Array(32).fill(1),
      settingsHash: new Uint8Array(32).fill(2),
      sourceRunId: 'run_01KA6T9Q2B000000000000000',
      sourceSeq: 0,
      links: [],
    },
  });
}

const validatorsOf = (jobId: string) => f.tdb.db.pageValidators.count({ where: { jobId } });

describe('refetch', () => {
  it('is conditional by default, set by create, PUT and PATCH, and shown in the detail', async () => {
    const created = await alice.post('/jobs', validJob());
    expect(created.status).toBe(201);
    expect(created.body.refetch).toBe('conditional');
    const id = created.body.job_id as string;
    expect((await alice.put(`/jobs/${id}`, { refetch: 'always' })).body.refetch).toBe('always');
    expect((await alice.get(`/jobs/${id}`)).body.refetch).toBe('always');
    expect((await alice.patch(`/jobs/${id}`, { refetch: 'conditional' })).body.refetch).toBe('conditional');
    // A PATCH without it keeps it.
    const always = await alice.post('/jobs', validJob({ refetch: 'always' }));
    expect(always.body.refetch).toBe('always');
    expect((await alice.patch(`/jobs/${always.body.job_id}`, { name: 'renamed' })).body.refetch).toBe(
      'always',
    );
  });

  it.each(['never', 'ALWAYS', true, null, 1])(
    'refuses %j with a 400 at refetch on create and update',
    async (value) => {
      const res = await alice.post('/jobs', validJob({ refetch: value }));
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.details)).toEqual(['refetch']);
      const id = (await alice.post('/jobs', validJob())).body.job_id as string;
      for (const update of [alice.put, alice.patch]) {
        const updated = await update(`/jobs/${id}`, { refetch: value });
        expect(updated.status).toBe(400);
        expect(Object.keys(updated.body.details)).toEqual(['refetch']);
      }
    },
  );

  it('is kept in the settings of the runs it starts', async () => {
    const id = (await alice.post('/jobs', validJob({ refetch: 'always' }))).body.job_id as string;
    const run = await alice.post(`/jobs/${id}/run`, {});
    expect(run.status).toBe(202);
    const stored = await f.tdb.db.run.findUniqueOrThrow({ where: { id: run.body.run_id } });
    expect(stored.settings).toEqual(expect.objectContaining({ refetch: 'always' }));
  });

  it("forgets the job's validators on any update, so that its next run fetches every page", async () => {
    const job = (await alice.post('/jobs', validJob())).body;
    const other = (await alice.post('/jobs', validJob())).body;
    await keepValidators(job.job_id, job.source);
    await keepValidators(other.job_id, other.source);
    expect((await alice.patch(`/jobs/${job.job_id}`, { name: 'renamed' })).status).toBe(200);
    expect(await validatorsOf(job.job_id)).toBe(0);
    expect(await validatorsOf(other.job_id)).toBe(1);
    await keepValidators(job.job_id, job.source);
    // PUT with only the fields read back from the detail is an update too.
    expect((await alice.put(`/jobs/${job.job_id}`, { job_id: job.job_id })).status).toBe(200);
    expect(await validatorsOf(job.job_id)).toBe(0);
    // Deleted with the job.
    expect((await alice.delete(`/jobs/${other.job_id}`)).status).toBe(204);
    expect(await validatorsOf(other.job_id)).toBe(0);
  });
});
