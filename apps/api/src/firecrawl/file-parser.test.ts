import { AppError } from '@scrapejobs/domain';
import { parseParseOptions } from '@scrapejobs/firecrawl';
import { FileParser, type ParseTask, ParseTimeout } from './file-parser.ts';

// The conversion threads of POST /v2/parse: a file converts off the event loop, and one past the
// time or heap limit ends its thread with a clear error, not the API.
const parsed = parseParseOptions('{"formats":["markdown","links"]}');
if (!parsed.ok) throw new Error('the options do not parse');
const options = parsed.value;

/** An HTML file of about `mib` MiB of distinct paragraphs (which the main-content step keeps). */
function bigHtml(mib: number): Uint8Array {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < mib * 1024 * 1024; i++) {
    const p = `<p>Paragraph ${i} has a few words, a <a href="https://example.com/${i}">link</a> and <b>bold ${i}</b>.</p>\n`;
    parts.push(p);
    size += p.length;
  }
  return new TextEncoder().encode(
    `<html><head><title>Big</title></head><body><main>${parts.join('')}</main></body></html>`,
  );
}

const task = (bytes: Uint8Array): ParseTask => ({
  kind: 'html',
  bytes,
  file: { name: 'big.html', type: 'text/html' },
  options,
});

describe('FileParser', () => {
  it('converts a large file off the event loop: timers here keep firing while it runs', async () => {
    const files = new FileParser({ timeLimitMs: 60_000, memoryMb: 256, threads: 1 });
    try {
      let ticks = 0;
      let longestGap = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
        ticks++;
      }, 20);
      const started = performance.now();
      const doc = await files.parse('alice', task(bigHtml(8)), 60_000);
      clearInterval(timer);
      const tookMs = performance.now() - started;
      expect(doc.markdown).toMatch(/^Paragraph 0 has a few words/);
      expect(doc.links).toHaveLength(10_000);
      // The conversion takes seconds; the loop here never waited more than a fraction of one.
      expect(tookMs).toBeGreaterThan(1_000);
      expect(ticks).toBeGreaterThan(tookMs / 100);
      expect(longestGap).toBeLessThan(500);
    } finally {
      await files.close();
    }
  });

  it('ends a conversion past the request’s timeout with a ParseTimeout, and converts the next file', async () => {
    const files = new FileParser({ timeLimitMs: 60_000, memoryMb: 256, threads: 1 });
    try {
      await expect(files.parse('alice', task(bigHtml(8)), 1_000)).rejects.toThrow(
        new ParseTimeout('The file was not parsed within its timeout of 1000 ms.'),
      );
      const small = new TextEncoder().encode('<html><body><h1>Small</h1></body></html>');
      await expect(files.parse('alice', task(small), 30_000)).resolves.toMatchObject({ markdown: '# Small' });
    } finally {
      await files.close();
    }
  });

  it('ends a conversion past its thread’s heap with a 413', async () => {
    const files = new FileParser({ timeLimitMs: 60_000, memoryMb: 32, threads: 1 });
    try {
      const error = await files.parse('alice', task(bigHtml(8)), 60_000).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(AppError);
      expect([(error as AppError).status, (error as AppError).message]).toEqual([
        413,
        'The file needs more than 32 MB to parse.',
      ]);
    } finally {
      await files.close();
    }
  });
});
