import { buildTestApi } from '../../../../test/support/api.ts';
import { client, validJob } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';

// The job field `retention_days` (docs/api.md §15) through the API; the sweep itself is tested in
// packages/domain runs/retention.test.ts.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let alice: ReturnType<typeof client>;
const prefix = testPrefix();

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'keep@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  alice = client(api.app, token);
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
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
