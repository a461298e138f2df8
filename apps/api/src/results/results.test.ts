import { newId, newRecordIdBase } from '@scrapejobs/db';
import {
  createJob,
  type Fixture,
  insertPage,
  insertResults,
  type SeedRecord,
  seedRun,
  startFixture,
  storedRecords,
} from '../../../../test/support/results.ts';

let f: Fixture;

beforeAll(async () => {
  f = await startFixture();
});

afterAll(async () => {
  await f.close();
});

const records = (n: number, tag = 'r'): SeedRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    url: `https://site.test/${tag}/${i}`,
    data: { title: `${tag}${i}` },
  }));

/** Follows next_cursor to the end; a page may be empty while earlier inserts are still in flight. */
async function pageAll(path: string, limit: number, onPage?: () => Promise<void>) {
  const seen: { url: string; result_id: string }[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const q: string = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await f.alice.get(q);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(res.body.results.length);
    seen.push(...res.body.results);
    cursor = res.body.next_cursor;
    await onPage?.();
    if (cursor === null) return seen;
  }
  throw new Error('paging did not end');
}

describe('GET /jobs/{id}/results', () => {
  it('shows query names like constructor and __proto__ as ordinary keys, null where the record has none', async () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
    const job = await createJob(f.alice, names);
    const run = await seedRun(f.tdb.db, job, records(1));
    // Written as jsonb text: Prisma would drop a `__proto__` key on the way in.
    await f.tdb.db.pool.query(
      `UPDATE result_pages SET data = '[{"__proto__":"p","toString":"t"}]'::jsonb WHERE run_id = $1`,
      [run],
    );
    const res = await f.alice.get(`/jobs/${job}/results`);
    expect(res.status).toBe(200);
    expect(Object.entries(res.body.results[0].data)).toEqual([
      ['constructor', null],
      ['__proto__', 'p'],
      ['toString', 't'],
      ['hasOwnProperty', null],
    ]);
  });

  it('gives run_id null and no records for a job that never ran', async () => {
    const job = await createJob(f.alice, ['title']);
    const res = await f.alice.get(`/jobs/${job}/results`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ job_id: job, run_id: null, results: [], count: 0, next_cursor: null });
  });

  it('shows the latest ended run by default, with every query name of the job in data', async () => {
    const job = await createJob(f.alice, ['title', 'price', 'note']);
    const t = Date.now();
    await seedRun(f.tdb.db, job, records(1, 'old'), { status: 'success', startedAt: new Date(t - 3000) });
    const latest = await seedRun(
      f.tdb.db,
      job,
      [
        {
          url: 'https://site.test/a',
          data: { title: 'A', price: null },
          scrapedAt: new Date('2026-11-21T10:00:00.123Z'),
        },
      ],
      { status: 'cancelled', startedAt: new Date(t - 2000) },
    );
    await seedRun(f.tdb.db, job, records(1, 'running'), { status: 'running', startedAt: new Date(t - 1000) });

    const res = await f.alice.get(`/jobs/${job}/results`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: job,
      run_id: latest,
      results: [
        {
          result_id: expect.stringMatching(/^res_[0-9A-Z]{26}$/),
          run_id: latest,
          url: 'https://site.test/a',
          data: { title: 'A', price: null, note: null },
          scraped_at: '2026-11-21T10:00:00.123Z',
        },
      ],
      count: 1,
      next_cursor: null,
    });
  });

  it('selects another run of the job with run_id', async () => {
    const job = await createJob(f.alice, ['title']);
    const first = await seedRun(f.tdb.db, job, records(2, 'first'), {
      startedAt: new Date(Date.now() - 5000),
    });
    await seedRun(f.tdb.db, job, records(1, 'second'));
    const res = await f.alice.get(`/jobs/${job}/results?run_id=${first}`);
    expect(res.status).toBe(200);
    expect(res.body.run_id).toBe(first);
    expect(res.body.results.map((r: { data: { title: string } }) => r.data.title)).toEqual([
      'first0',
      'first1',
    ]);
  });

  it('answers 404 for a run of another job, an unknown run and a malformed run id', async () => {
    const job = await createJob(f.alice, ['title']);
    const other = await createJob(f.alice, ['title']);
    const otherRun = await seedRun(f.tdb.db, other, records(1));
    for (const runId of [otherRun, newId('run'), 'nope']) {
      const res = await f.alice.get(`/jobs/${job}/results?run_id=${runId}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
  });

  it("answers 404 for another user's job and for the same user's job in the other mode", async () => {
    const job = await createJob(f.alice, ['title']);
    await seedRun(f.tdb.db, job, records(1));
    for (const c of [f.bob, f.aliceLive]) {
      const res = await c.get(`/jobs/${job}/results`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    }
  });

  it('validates limit and cursor', async () => {
    const job = await createJob(f.alice, ['title']);
    for (const [q, path] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=x', 'limit'],
      ['cursor=bm9wZQ', 'cursor'],
      ['colour=red', 'colour'],
    ] as const) {
      const res = await f.alice.get(`/jobs/${job}/results?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(Object.keys(res.body.details)).toEqual([path]);
    }
  });

  it('pages through a run in the order stored, every record exactly once', async () => {
    const job = await createJob(f.alice, ['title']);
    await seedRun(f.tdb.db, job, records(23));
    const seen = await pageAll(`/jobs/${job}/results`, 5);
    expect(seen.map((r) => r.url)).toEqual(records(23).map((r) => r.url));
    expect(new Set(seen.map((r) => r.result_id)).size).toBe(23);
  });

  it('pages within and across pages of many records, with ids that stay the same', async () => {
    const job = await createJob(f.alice, ['title']);
    const run = await seedRun(f.tdb.db, job, []);
    const sizes = [7, 1, 12, 3];
    const kept = [newId('res'), newId('res'), newId('res')];
    for (const [urlIndex, size] of sizes.entries())
      await insertPage(f.tdb.db, run, {
        url: `https://site.test/p/${urlIndex}`,
        urlIndex,
        records: Array.from({ length: size }, (_, row) => ({ title: `${urlIndex}.${row}` })),
        // Records moved from the layout of one row per record keep their ids.
        ...(urlIndex === 3 && { ids: kept }),
      });
    const expected = sizes.flatMap((size, page) =>
      Array.from({ length: size }, (_, row) => `${page}.${row}`),
    );
    const stored = (await storedRecords(f.tdb.db, run)).map((r) => r.id);
    expect(stored.slice(-3)).toEqual(kept);
    for (const limit of [1, 3, 7, 8, 1000]) {
      const seen = (await pageAll(`/jobs/${job}/results?run_id=${run}`, limit)) as unknown as {
        result_id: string;
        url: string;
        data: { title: string };
      }[];
      expect(seen.map((r) => r.data.title)).toEqual(expected);
      expect(seen.map((r) => r.url)).toEqual(expected.map((t) => `https://site.test/p/${t.split('.')[0]}`));
      expect(seen.map((r) => r.result_id)).toEqual(stored);
    }
    expect(new Set(stored).size).toBe(expected.length);
    const page = await f.alice.get(`/jobs/${job}/results?run_id=${run}&limit=23`);
    expect(page.body.count).toBe(23);
    expect(page.body.next_cursor).toBeNull();
  });

  it('keeps following the run of the cursor when a newer run ends in between', async () => {
    const job = await createJob(f.alice, ['title']);
    const run = await seedRun(f.tdb.db, job, records(4), { startedAt: new Date(Date.now() - 5000) });
    const page1 = await f.alice.get(`/jobs/${job}/results?limit=2`);
    await seedRun(f.tdb.db, job, records(3, 'newer'));
    const page2 = await f.alice.get(`/jobs/${job}/results?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.run_id).toBe(run);
    expect(page2.body.results.map((r: { url: string }) => r.url)).toEqual(
      records(4)
        .slice(2)
        .map((r) => r.url),
    );
    const mismatch = await f.alice.get(
      `/jobs/${job}/results?run_id=${newId('run')}&cursor=${page1.body.next_cursor}`,
    );
    expect(mismatch.status).toBe(400);
    expect(Object.keys(mismatch.body.details)).toEqual(['cursor']);
  });

  it('never skips a record whose insert commits after a later one (sequence taken before commit)', async () => {
    const job = await createJob(f.alice, ['title']);
    const run = await seedRun(f.tdb.db, job, records(3, 'before'), { status: 'running' });
    // A worker's transaction takes the next sequence number and is slow to commit...
    const slow = await f.tdb.db.pool.connect();
    try {
      await slow.query('BEGIN');
      await slow.query(
        `INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
         VALUES ($1, 100, 'https://site.test/slow', now(), 1, $2, '[{"title":"slow"}]')`,
        [run, newRecordIdBase()],
      );
      // ...while another one, with higher numbers, commits first.
      await insertResults(f.tdb.db, run, records(2, 'after'), 10);
      const page = await f.alice.get(`/jobs/${job}/results?run_id=${run}&limit=100`);
      expect(page.body.results.map((r: { url: string }) => r.url)).toEqual(
        records(3, 'before').map((r) => r.url),
      );
      expect(page.body.next_cursor).not.toBeNull();
      await slow.query('COMMIT');
      const rest = await f.alice.get(
        `/jobs/${job}/results?run_id=${run}&limit=100&cursor=${page.body.next_cursor}`,
      );
      expect(rest.body.results.map((r: { url: string }) => r.url)).toEqual([
        'https://site.test/slow',
        ...records(2, 'after').map((r) => r.url),
      ]);
      expect(rest.body.next_cursor).toBeNull();
    } finally {
      await slow.query('ROLLBACK').catch(() => {});
      slow.release();
    }
  });

  it('is not held back by a long transaction that writes elsewhere', async () => {
    const job = await createJob(f.alice, ['title']);
    const other = await f.tdb.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      const run = await seedRun(f.tdb.db, job, records(3), { status: 'running' });
      const page = await f.alice.get(`/jobs/${job}/results?run_id=${run}`);
      expect(page.body.count).toBe(3);
      expect(page.body.next_cursor).toBeNull();
    } finally {
      await other.query('ROLLBACK');
      other.release();
    }
  });

  it('returns every record exactly once while concurrent writers insert into the run', async () => {
    const job = await createJob(f.alice, ['title']);
    const run = await seedRun(f.tdb.db, job, records(200, 'seed'), { status: 'running' });
    let writing = true;
    let written = 200;
    // Three writers whose transactions overlap and commit out of sequence order.
    const writer = async (w: number) => {
      const c = await f.tdb.db.pool.connect();
      try {
        for (let batch = 0; writing && batch < 40; batch++) {
          await c.query('BEGIN');
          for (let i = 0; i < 3; i++) {
            const n = written++;
            await c.query(
              `INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
               VALUES ($1, $2, $3, now(), 1, $4, '[{}]')`,
              [run, 1000 + n, `https://site.test/w${w}/${n}`, newRecordIdBase()],
            );
          }
          await new Promise((r) => setTimeout(r, Math.random() * 4));
          await c.query('COMMIT');
        }
      } finally {
        c.release();
      }
    };
    const writers = Promise.all([1, 2, 3].map(writer));
    const seen = await pageAll(`/jobs/${job}/results?run_id=${run}`, 5, async () => {
      // Keep paging while the writers write; once they are done, drain to the end.
      if (!writing) return;
      await new Promise((r) => setTimeout(r, 1));
    }).finally(() => {
      writing = false;
    });
    await writers;
    const rest = await pageAll(`/jobs/${job}/results?run_id=${run}`, 1000);
    const stored = (await storedRecords(f.tdb.db, run)).sort((a, b) => (a.seq < b.seq ? -1 : 1));
    // A page that went past the writers saw everything; the second pass proves the set is complete.
    const ids = seen.map((r) => r.result_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(stored.slice(0, ids.length).map((r) => r.id));
    expect(rest.map((r) => r.result_id)).toEqual(stored.map((r) => r.id));
  });
});
