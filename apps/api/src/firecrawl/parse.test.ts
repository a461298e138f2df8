import type { AddressInfo } from 'node:net';
import { NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import request from 'supertest';
import { makePdf } from '../../../../packages/content/src/testing/pdf.ts';
import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';

// POST /v2/parse (docs/api.md §18) through the API's routes, on its conversion threads, against a
// real database: multipart in, a Firecrawl document out, and the 4xx of every bad upload.
let fx: ApiFixture;
let token: string;
/** PARSE_MAX_BYTES of this API: small, so that the limits are cheap to reach. */
const MAX_BYTES = 64 * 1024;

const PAGE = `<!doctype html><html lang="en"><head><title>Release notes</title></head><body>
<nav><a href="https://example.com/">Home</a></nav>
<main><h1>Version 2</h1><p>Parsing <strong>uploaded</strong> files.</p><ul><li>HTML</li><li>PDF</li></ul></main>
</body></html>`;

beforeAll(async () => {
  fx = await apiFixture({ env: { PARSE_MAX_BYTES: MAX_BYTES } });
  ({ token } = await fx.api.keys.create({
    email: 'alice@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  }));
});

afterAll(() => fx.close());

interface Upload {
  name: string;
  type?: string;
  data: Buffer | Uint8Array | string;
}

const pdfFile = (name: string, data: Upload['data']): Upload => ({ name, type: 'application/pdf', data });

/** A multipart POST /v2/parse as Firecrawl's SDK sends it: an options part, then the file. */
function parse(file: Upload | null, options?: unknown, path = '/v2/parse') {
  let req = request(fx.api.app).post(path).set('Authorization', `Bearer ${token}`);
  if (options !== undefined)
    req = req.field('options', typeof options === 'string' ? options : JSON.stringify(options));
  if (file)
    req = req.attach('file', Buffer.from(file.data), {
      filename: file.name,
      contentType: file.type ?? 'application/octet-stream',
    });
  return req;
}

describe('POST /v2/parse', () => {
  it('gives an HTML file’s main content as markdown, with its title, and counts one page', async () => {
    const before = await fx.tdb.db.accountUsage.findMany();
    const res = await parse(
      { name: 'notes.html', type: 'text/html', data: PAGE },
      { formats: ['markdown', 'html'], origin: 'js-sdk@4.42.0' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        markdown: '# Version 2\n\nParsing **uploaded** files.\n\n- HTML\n- PDF',
        html: expect.stringContaining('<h1>Version 2</h1>'),
        metadata: {
          title: 'Release notes',
          language: 'en',
          sourceURL: 'notes.html',
          url: 'notes.html',
          contentType: 'text/html',
        },
      },
    });
    expect(res.body.data.html).not.toContain('Home');
    const after = await fx.tdb.db.accountUsage.findMany();
    expect(after.map((row) => Number(row.pages))).toEqual([
      before.reduce((sum, row) => sum + Number(row.pages), 0) + 1,
    ]);
    // Nothing is stored: no job, no run.
    expect(await fx.tdb.db.job.count()).toBe(0);
  });

  it('gives a PDF’s text page by page, up to pdfOptions.maxPages, with its page count', async () => {
    const pdf = await makePdf({
      title: 'Minutes',
      pages: [['The first page.'], ['The second page.'], ['The third page.']],
    });
    const res = await parse(
      { name: 'minutes.pdf', type: 'application/pdf', data: pdf },
      { pdfOptions: { maxPages: 2 } },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.markdown).toBe('The first page.\n\n---\n\nThe second page.');
    expect(res.body.data.metadata).toMatchObject({
      title: 'Minutes',
      numPages: 3,
      contentType: 'application/pdf',
    });
    const all = await parse({ name: 'minutes.pdf', type: 'application/pdf', data: pdf });
    expect(all.body.data.markdown).toContain('The third page.');
  });

  it('answers the warnings of what it serves differently, beside the document', async () => {
    const res = await parse(
      { name: 'a.html', type: 'text/html', data: PAGE },
      { parsers: ['image'], timeout: 300_000 },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.warning).toBe(
      'the parser "image" is not known to this service and is ignored; the file is parsed within 60000 ms, this service\'s limit, not 300000',
    );
  });

  it('is a 400 at file without a file part, with a text field, or an empty file', async () => {
    for (const req of [
      parse(null, {}),
      request(fx.api.app).post('/v2/parse').set('Authorization', `Bearer ${token}`).field('file', 'text'),
      parse({ name: 'empty.html', type: 'text/html', data: '' }),
    ]) {
      const res = await req;
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, details: { file: expect.any(String) } });
    }
  });

  it('is a 400 at options, or at the field, for options it cannot read', async () => {
    const file = { name: 'a.html', type: 'text/html', data: PAGE };
    const bad = await parse(file, '{"formats": [');
    expect([bad.status, Object.keys(bad.body.details)]).toEqual([400, ['options']]);
    const formats = await parse(file, { formats: ['markdown', 'screenshot'], waitFor: 1000 });
    expect(formats.status).toBe(400);
    expect(formats.body).toEqual({
      success: false,
      error: expect.stringContaining('options.formats[1]'),
      details: {
        'options.formats[1]': 'parse does not support the screenshot format',
        'options.waitFor': 'parse does not support waitFor',
      },
    });
  });

  it('is a 400 at the formats the language model writes when none is configured', async () => {
    const res = await parse(
      { name: 'a.html', type: 'text/html', data: PAGE },
      { formats: ['markdown', 'summary'] },
    );
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ 'options.formats[1]': NO_MODEL_MESSAGE });
  });

  it('is a 400 at file for a PDF the converter cannot read, or a file named .pdf that is not one', async () => {
    const broken = await parse(pdfFile('broken.pdf', '%PDF-1.7\nnot a real PDF'));
    expect(broken.status).toBe(400);
    expect(broken.body.details.file).toMatch(/^could not be read: /);
    const fake = await parse(pdfFile('fake.pdf', PAGE));
    expect([fake.status, fake.body.details]).toEqual([
      400,
      { file: 'is not a PDF: it does not start with %PDF-' },
    ]);
  });

  it('is a 413 for a file over PARSE_MAX_BYTES, and for a body far over it', async () => {
    const big = await parse({ name: 'big.html', type: 'text/html', data: 'x'.repeat(MAX_BYTES + 1) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({
      success: false,
      error: `The file has ${MAX_BYTES + 1} bytes, more than the limit of ${MAX_BYTES}.`,
    });
    const huge = await parse({
      name: 'huge.html',
      type: 'text/html',
      data: 'x'.repeat(MAX_BYTES + 2 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error).toMatch(
      /^The request body exceeds \d+ bytes: a file may have at most 65536 bytes\.$/,
    );
  });

  it('is a 413 for a body sent in chunks, without a length, as soon as it passes the limit', async () => {
    const server = fx.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const boundary = 'parse-test-boundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.html"\r\nContent-Type: text/html\r\n\r\n`;
      let sent = 0;
      // Far more than the limit, if it were all read: the API answers before the end.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > 64 * 1024 * 1024) return controller.close();
          const chunk = sent === 0 ? head + 'x'.repeat(65_536) : 'x'.repeat(65_536);
          sent += chunk.length;
          controller.enqueue(new TextEncoder().encode(chunk));
        },
      });
      const res = await fetch(`http://127.0.0.1:${port}/v2/parse`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
        },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({
        success: false,
        error: expect.stringMatching(/^The request body exceeds/),
      });
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is a 415 naming the kinds it parses for Word and spreadsheet files, and for a body that is not a form', async () => {
    const docx = await parse({
      name: 'report.docx',
      type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      data: 'PK\u0003\u0004',
    });
    expect(docx.status).toBe(415);
    expect(docx.body.error).toMatch(
      /\.docx\) cannot be parsed: this service parses HTML \(\.html, \.htm, \.xhtml\) and PDF \(\.pdf\) files/,
    );
    const xlsx = await parse({ name: 'sheet.xlsx', data: 'PK\u0003\u0004' });
    expect(xlsx.status).toBe(415);
    const json = await request(fx.api.app)
      .post('/v2/parse')
      .set('Authorization', `Bearer ${token}`)
      .send({ file: 'x' });
    expect([json.status, json.body.success]).toEqual([415, false]);
  });

  it('needs a key with jobs:write, and is not a v1 endpoint', async () => {
    const reader = await fx.keyClient('reader@example.com', 'test', ['jobs:read']);
    const file = { name: 'a.html', type: 'text/html', data: PAGE };
    const anonymous = await request(fx.api.app).post('/v2/parse').attach('file', Buffer.from(PAGE), 'a.html');
    expect(anonymous.status).toBe(401);
    const readOnly = await reader.post('/v2/parse').attach('file', Buffer.from(file.data), 'a.html');
    expect(readOnly.status).toBe(403);
    expect((await parse(file, {}, '/v1/parse')).status).toBe(404);
  });
});
