import type {
  ChangeItem,
  ChangeList,
  ChangeType,
  DownloadContent,
  DownloadFormat,
  Result,
  Run,
  RunUrl,
} from '../types.ts';
import { type Command, type Context, limitOf, pageSize, str, UsageError } from './command.ts';
import { type Column, take } from './output.ts';
import { formatBytes, ProgressBar } from './progress.ts';

const LIST = { limit: { type: 'string' } } as const;

const RUN_COLUMNS: Column<Run>[] = [
  { header: 'run_id', value: (r) => r.run_id },
  { header: 'status', value: (r) => r.status },
  { header: 'trigger', value: (r) => r.trigger },
  { header: 'started_at', value: (r) => r.started_at },
  { header: 'duration_ms', value: (r) => r.duration_ms },
  { header: 'results', value: (r) => r.results_count },
  { header: 'ok', value: (r) => r.successful_urls },
  { header: 'failed', value: (r) => r.failed_urls },
  { header: 'skipped', value: (r) => r.skipped_urls },
];

const URL_COLUMNS: Column<RunUrl>[] = [
  { header: 'status', value: (u) => u.status },
  { header: 'http', value: (u) => u.http_status },
  // A page not changed since its last successful run: its records were copied (docs/api.md §20).
  { header: 'unchanged', value: (u) => u.unchanged },
  { header: 'records', value: (u) => u.records },
  { header: 'depth', value: (u) => u.depth },
  { header: 'error', value: (u) => u.error?.code },
  { header: 'url', value: (u) => u.url },
];

/** url, scraped_at, then the job's query names (the first record's keys are in the job's order). */
const resultColumns = (first: Result | undefined): Column<Result>[] => [
  { header: 'url', value: (r) => r.url },
  { header: 'scraped_at', value: (r) => r.scraped_at },
  ...Object.keys(first?.data ?? {}).map((name) => ({ header: name, value: (r: Result) => r.data[name] })),
];

// A record's change shows its key and record; a page's (change_tracking.content) its URL and diff.
const CHANGE_COLUMNS: Column<ChangeItem>[] = [
  { header: 'type', value: (c) => c.type },
  { header: 'kind', value: (c) => ('kind' in c ? c.kind : 'record') },
  { header: 'key', value: (c) => ('kind' in c ? c.url : c.key) },
  { header: 'changed_fields', value: (c) => ('kind' in c ? null : c.changed_fields.join(',') || null) },
  { header: 'data', value: (c) => ('kind' in c ? c.diff : (c.data ?? c.previous)) },
];

/** `15 added, 0 removed, …`, then the pages' counts when the run compared pages too. */
function summaryLine({ pages, ...records }: ChangeList['summary']): string {
  const counts = (o: object) => Object.entries(o).map(([k, v]) => `${v} ${k}`);
  return `${counts(records).join(', ')}${pages ? `; pages: ${counts(pages).join(', ')}` : ''}`;
}

// Keyed by every name of the type, so a format or content the API adds fails the type-check here.
const FORMATS = Object.keys({ json: 1, jsonl: 1, csv: 1, xlsx: 1, sql: 1 } satisfies Record<
  DownloadFormat,
  1
>);
const CONTENTS = Object.keys({ records: 1, documents: 1 } satisfies Record<DownloadContent, 1>);

/** `--<name>`: one of `allowed`, or undefined. */
function oneOf<T extends string>(ctx: Context, name: string, allowed: readonly string[]): T | undefined {
  const value = str(ctx.values, name);
  if (value !== undefined && !allowed.includes(value))
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T | undefined;
}

async function download(ctx: Context): Promise<undefined> {
  const jobId = ctx.args[0]!;
  const path = str(ctx.values, 'output');
  const changes = str(ctx.values, 'changes')?.split(',') as ChangeType[] | undefined;
  // To standard output the bytes are the output: nothing else may be printed there.
  const bar = new ProgressBar(ctx.streams.stderr, path ?? 'download', ctx.progress);
  let last = { bytes: 0, size: null as number | null };
  const done = await ctx.client.results.download(jobId, {
    format: oneOf<DownloadFormat>(ctx, 'format', FORMATS),
    content: oneOf<DownloadContent>(ctx, 'content', CONTENTS),
    run_id: str(ctx.values, 'run'),
    changes,
    to: path ?? ctx.streams.stdout,
    onProgress: (p) => {
      last = p;
      bar.update(p.bytes, p.size, formatBytes(p.bytes));
    },
  });
  bar.finish(last.bytes, last.size ?? last.bytes, formatBytes(done.bytes));
  if (!path) return undefined;
  const summary = { file: path, bytes: done.bytes, content_type: done.contentType, filename: done.filename };
  if (ctx.out.json) ctx.out.value(summary);
  else ctx.out.line(`${path}: ${formatBytes(done.bytes)} (${done.contentType})`);
  return undefined;
}

export const runCommands: Record<string, Command> = {
  'runs list': {
    usage: 'runs list <job_id> [--limit <n>]',
    summary: "list a job's runs, newest first",
    args: ['job_id'],
    options: LIST,
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const runs = ctx.client.runs.iterate(ctx.args[0]!, { limit: pageSize(limit) });
      await ctx.out.list(take(runs, limit), () => RUN_COLUMNS);
      return undefined;
    },
  },
  'runs get': {
    usage: 'runs get <job_id> <run_id>',
    summary: 'show one run',
    args: ['job_id', 'run_id'],
    async run(ctx) {
      ctx.out.record(await ctx.client.runs.get(ctx.args[0]!, ctx.args[1]!));
      return undefined;
    },
  },
  'runs urls': {
    usage: 'runs urls <job_id> <run_id> [--status pending|success|failed|skipped] [--limit <n>]',
    summary: "list a run's URLs in the order accepted, with what became of each",
    args: ['job_id', 'run_id'],
    options: { ...LIST, status: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const status = str(ctx.values, 'status') as RunUrl['status'] | undefined;
      const urls = ctx.client.runs.iterateUrls(ctx.args[0]!, ctx.args[1]!, {
        status,
        limit: pageSize(limit),
      });
      await ctx.out.list(take(urls, limit), () => URL_COLUMNS);
      return undefined;
    },
  },
  'results get': {
    usage: 'results get <job_id> [--run <run_id>] [--limit <n>]',
    summary: "list a run's records (default: the latest ended run)",
    args: ['job_id'],
    options: { ...LIST, run: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const results = ctx.client.results.iterate(ctx.args[0]!, {
        run_id: str(ctx.values, 'run'),
        limit: pageSize(limit),
      });
      await ctx.out.list(take(results, limit), resultColumns);
      return undefined;
    },
  },
  'results download': {
    usage:
      'results download <job_id> [--format json|jsonl|csv|xlsx|sql] [--content records|documents] [-o <file>] [--run <run_id>] [--changes added,changed,removed]',
    summary:
      "stream a run's records, or with --content documents its pages' documents (json or jsonl), as a file (to standard output without -o)",
    args: ['job_id'],
    options: {
      format: { type: 'string' },
      content: { type: 'string' },
      output: { type: 'string', short: 'o' },
      run: { type: 'string' },
      changes: { type: 'string' },
    },
    run: download,
  },
  changes: {
    usage: 'changes <job_id> <run_id> [--type added|removed|changed] [--limit <n>]',
    summary:
      "list what changed in a run against its base run (change tracking): records, and pages' markdown with change_tracking.content",
    args: ['job_id', 'run_id'],
    options: { ...LIST, type: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const [jobId, runId] = [ctx.args[0]!, ctx.args[1]!];
      const type = str(ctx.values, 'type') as ChangeType | undefined;
      if (!ctx.out.json) {
        const { base_run_id, summary } = await ctx.client.runs.changes(jobId, runId, { type, limit: 1 });
        ctx.out.line(`${runId} against ${base_run_id ?? '(no base run)'}: ${summaryLine(summary)}`);
      }
      const changes = ctx.client.runs.iterateChanges(jobId, runId, { type, limit: pageSize(limit) });
      await ctx.out.list(take(changes, limit), () => CHANGE_COLUMNS);
      return undefined;
    },
  },
};
