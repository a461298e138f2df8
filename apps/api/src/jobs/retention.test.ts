import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { type Client, validJob } from '../../../../test/support/client.ts';

// The job field `retention_days` (docs/api.md §15) through the API; the sweep itself is tested in
// packages/domain runs/retention.test.ts.

let f: ApiFixture;
let alice: Client;

beforeAll(async () => {
  f = await apiFixture();
  alice = await f.keyClient('keep@example.com');
});

afterAll(async () => {
  await f.close();
});

describe('retention_days', () => {
  it("is null (the operator's) by default, set by create and PUT, cleared by null", async () => {
    const created = await alice.post('/jobs', validJob());
    expect(created.body.retention_days).toBeNull();
    const id = created.body.job_id as string;
    expect((await alice.put(`/jobs/${id}`, { retention_days: 90 })).body.retention_days).toBe(90);
    expect((await alice.get(`/jobs/${id}`)).body.retention_days).toBe(90);
    expect((await alice.patch(`/jobs/${id}`, { retention_days: null })).body.retention_days).toBeNull();
    expect((await alice.post('/jobs', validJob({ retention_days: 3650 }))).status).toBe(201);
  });

  it.each([0, 3651, 1.5, '30'])('refuses %j with a 400 at retention_days', async (value) => {
    const res = await alice.post('/jobs', validJob({ retention_days: value }));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toEqual(['retention_days']);
  });
});
