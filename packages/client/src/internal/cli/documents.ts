import type { Document } from '../types.ts';
import { type Command, type Context, limitOf, str, UsageError } from './command.ts';
import { take } from './output.ts';

const FORMATS = ['jsonl', 'json', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

/** The API's largest page of documents. */
const MAX_PAGE = 100;

/** `--format`, else JSON Lines (a JSON array with `--json`). */
function formatOf(ctx: Context): Format {
  const format = str(ctx.values, 'format');
  if (format === undefined) return ctx.out.json ? 'json' : 'jsonl';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  return format as Format;
}

/**
 * Each document's markdown under a `# <url>` line, a blank line between documents; a note on
 * standard error when some had none (the job's formats leave markdown out).
 */
async function printMarkdown(ctx: Context, documents: AsyncIterable<Document>): Promise<void> {
  let count = 0;
  let without = 0;
  for await (const doc of documents) {
    if (doc.markdown === undefined) without++;
    const body = doc.markdown?.replace(/\n+$/, '');
    await ctx.out.write(`${count++ ? '\n' : ''}# ${doc.url}\n${body ? `\n${body}\n` : ''}`);
  }
  if (without > 0)
    ctx.streams.stderr.write(
      `scrapejobs: ${without} of ${count} documents have no markdown (the job's formats do not include markdown)\n`,
    );
}

export const documentCommands: Record<string, Command> = {
  documents: {
    usage: 'documents <job_id> <run_id> [--url <url>] [--format jsonl|json|markdown] [--limit <n>]',
    summary:
      "print a run's documents in its URL order: JSON Lines (default), a JSON array, or each page's markdown under a # <url> line",
    args: ['job_id', 'run_id'],
    options: { url: { type: 'string' }, format: { type: 'string' }, limit: { type: 'string' } },
    async run(ctx) {
      const format = formatOf(ctx);
      const limit = limitOf(ctx.values);
      const documents = take(
        ctx.client.runs.iterateDocuments(ctx.args[0]!, ctx.args[1]!, {
          url: str(ctx.values, 'url'),
          limit: Math.min(limit ?? MAX_PAGE, MAX_PAGE),
        }),
        limit,
      );
      if (format === 'markdown') await printMarkdown(ctx, documents);
      else if (format === 'json') await ctx.out.array(documents);
      else await ctx.out.jsonLines(documents);
      return undefined;
    },
  },
};
