import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { validJob } from '../../../../test/support/client.ts';

let f: ApiFixture;

beforeAll(async () => {
  f = await apiFixture();
});

afterAll(async () => {
  await f.close();
});

// Cheap to write, costly to evaluate even on the empty page a compile runs it on.
const EXPENSIVE = 'count((1 to 100000000)[. mod 7 = 0])';

describe('compiling queries on create and update', () => {
  it('refuses each of 50 expensive queries at its path, with the budget naming the ones never compiled', async () => {
    const mallory = await f.keyClient('mallory@example.com');
    const queries = Array.from({ length: 50 }, (_, i) => ({
      name: `q${i}`,
      type: 'xpath',
      query: EXPENSIVE,
    }));
    const res = await mallory.post('/jobs', validJob({ queries }));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details).sort()).toEqual(queries.map((_, i) => `queries[${i}].query`).sort());
    const texts = Object.values(res.body.details) as string[];
    expect(texts).toContain('too expensive to compile (took longer than 1000 ms)');
    expect(texts).toContain("too expensive to compile (the job's queries took longer than 5000 ms in all)");
    for (const text of texts) expect(text).toMatch(/^too expensive to compile \(/);
  });

  it("compiles another user's job at once while one user's expensive queries hold a compile thread", async () => {
    const mallory = await f.keyClient('mallory2@example.com');
    const alice = await f.keyClient('alice@example.com');
    const queries = Array.from({ length: 10 }, (_, i) => ({
      name: `q${i}`,
      type: 'xpath',
      query: EXPENSIVE,
    }));
    const answered: string[] = [];
    const refused = mallory.post('/jobs', validJob({ queries })).then((res) => {
      answered.push('mallory');
      return res;
    });
    await new Promise((r) => setTimeout(r, 200));
    const created = await alice.post(
      '/jobs',
      validJob({ queries: [{ name: 'title', type: 'xpath', query: '//h1[@class="t"]/text()' }] }),
    );
    answered.push('alice');
    expect(created.status).toBe(201);
    expect((await refused).status).toBe(400);
    // Behind mallory's queries alice would wait for their whole 5 s budget, and be answered last.
    expect(answered).toEqual(['alice', 'mallory']);
  });

  it('refuses an expensive query on update at its path and keeps the job as it was', async () => {
    const alice = await f.keyClient('alice3@example.com');
    const job = (await alice.post('/jobs', validJob())).body;
    const res = await alice.patch(`/jobs/${job.job_id}`, {
      queries: [
        { name: 'ok', type: 'css', query: 'h1' },
        { name: 'slow', type: 'xpath', query: EXPENSIVE },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      'queries[1].query': 'too expensive to compile (took longer than 1000 ms)',
    });
    expect((await alice.get(`/jobs/${job.job_id}`)).body.queries).toEqual(job.queries);
  });
});
