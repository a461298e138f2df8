import { packDocument } from '@scrapejobs/content';
import { newId } from '@scrapejobs/db';
import { createJob, type Fixture, seedRun, startFixture } from '../../../../test/support/results.ts';

let f: Fixture;

beforeAll(async () => {
  f = await startFixture();
});

afterAll(async () => {
  await f.close();
});

const metadata = (url: string) => ({
  title: `Title of ${url}`,
  description: null,
  language: 'en',
  canonical_url: null,
  keywords: null,
  robots: null,
  favicon: null,
  og: {},
  twitter: {},
  published_time: null,
  modified_time: null,
  json_ld: [],
  status_code: 200,
  content_type: 'text/html',
  source_url: url,
  url,
});

/** A run of the job that kept `formats`, with one document per URL as a worker stores them. */
async function seedDocuments(jobId: string, formats: string[], urls: string[]): Promise<string> {
  const runId = await seedRun(f.tdb.db, jobId, []);
  await f.tdb.db.run.update({ where: { id: runId }, data: { settings: { formats } } });
  for (const [seq, url] of urls.entries()) {
    // A markdown kept for change tracking only, and raw html, are stored but not asked for.
    const packed = packDocument({
      markdown: `# Page ${seq}\n\nText of ${url}`,
      raw_html: '<html>not shown</html>',
      metadata: metadata(url),
      truncated: seq === 1 ? ['markdown', 'raw_html'] : [],
    });
    await f.tdb.db.runDocument.create({
      data: {
        runId,
        seq,
        url,
        statusCode: 200,
        bytes: packed.bytes,
        markdownHash: packed.markdownHash ? Buffer.from(packed.markdownHash) : null,
        data: Buffer.from(packed.data),
      },
    });
  }
  return runId;
}

const urls = ['https://site.test/a', 'https://site.test/b', 'https://site.test/c'];

describe('GET /jobs/{id}/runs/{run_id}/documents', () => {
  it("pages through a run's documents in URL order with the run's formats only", async () => {
    const jobId = await createJob(f.alice, ['title']);
    const runId = await seedDocuments(jobId, ['markdown', 'metadata'], urls);
    const first = await f.alice.get(`/jobs/${jobId}/runs/${runId}/documents?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ job_id: jobId, run_id: runId, count: 2 });
    expect(first.body.documents[0]).toEqual({
      url: urls[0],
      status_code: 200,
      markdown: `# Page 0\n\nText of ${urls[0]}`,
      metadata: metadata(urls[0]!),
      truncated: [],
    });
    expect(first.body.documents[1].truncated).toEqual(['markdown']);
    const second = await f.alice.get(
      `/jobs/${jobId}/runs/${runId}/documents?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.body.documents.map((d: { url: string }) => d.url)).toEqual([urls[2]]);
    expect(second.body.next_cursor).toBeNull();
  });

  it('filters by the URL asked for', async () => {
    const jobId = await createJob(f.alice, ['title']);
    const runId = await seedDocuments(jobId, ['markdown'], urls);
    const res = await f.alice.get(
      `/jobs/${jobId}/runs/${runId}/documents?url=${encodeURIComponent(urls[1]!)}`,
    );
    expect(res.body.documents).toEqual([
      { url: urls[1], status_code: 200, markdown: `# Page 1\n\nText of ${urls[1]}`, truncated: ['markdown'] },
    ]);
  });

  it("answers 404 for another user's run and a run of another job, 400 for a bad limit or cursor", async () => {
    const jobId = await createJob(f.alice, ['title']);
    const runId = await seedDocuments(jobId, ['markdown'], urls);
    expect((await f.bob.get(`/jobs/${jobId}/runs/${runId}/documents`)).status).toBe(404);
    const other = await createJob(f.alice, ['title']);
    expect((await f.alice.get(`/jobs/${other}/runs/${runId}/documents`)).status).toBe(404);
    expect((await f.alice.get(`/jobs/${jobId}/runs/${newId('run')}/documents`)).status).toBe(404);
    const badLimit = await f.alice.get(`/jobs/${jobId}/runs/${runId}/documents?limit=101`);
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.details).toHaveProperty(['limit']);
    const badCursor = await f.alice.get(`/jobs/${jobId}/runs/${runId}/documents?cursor=nope`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.details).toHaveProperty(['cursor']);
  });
});

describe('GET /jobs/{id}/download?content=documents', () => {
  it("streams the latest run's documents as json and as jsonl", async () => {
    const jobId = await createJob(f.alice, ['title']);
    await seedDocuments(jobId, ['metadata'], urls);
    const json = await f.alice.get(`/jobs/${jobId}/download?content=documents&format=json`);
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const documents = JSON.parse(json.text) as { url: string; metadata: unknown }[];
    expect(documents.map((d) => d.url)).toEqual(urls);
    expect(documents[2]).toEqual({
      url: urls[2],
      status_code: 200,
      metadata: metadata(urls[2]!),
      truncated: [],
    });
    const jsonl = await f.alice.get(`/jobs/${jobId}/download?content=documents&format=jsonl`);
    expect(jsonl.headers['content-type']).toMatch(/^application\/jsonl/);
    const lines = jsonl.text.trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(documents);
  });

  it('gives records as jsonl, one object a line', async () => {
    const jobId = await createJob(f.alice, ['title']);
    await seedRun(f.tdb.db, jobId, [{ url: 'https://site.test/x', data: { title: 'X' } }]);
    const res = await f.alice.get(`/jobs/${jobId}/download?format=jsonl`);
    expect(res.status).toBe(200);
    expect(
      res.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ url: 'https://site.test/x', scraped_at: expect.any(String), title: 'X' }]);
  });

  it.each(['csv', 'xlsx', 'sql'])('refuses documents as %s with a 400 at format', async (format) => {
    const jobId = await createJob(f.alice, ['title']);
    const res = await f.alice.get(`/jobs/${jobId}/download?content=documents&format=${format}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveProperty(['format']);
  });

  it('refuses an unknown content with a 400 at content', async () => {
    const jobId = await createJob(f.alice, ['title']);
    const res = await f.alice.get(`/jobs/${jobId}/download?content=pages`);
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveProperty(['content']);
  });
});
