import { WaitTimeoutError } from '../errors.ts';
import type { CreateJobRequest, JobDetail, JobListItem, Run, UpdateJobRequest } from '../types.ts';
import {
  type Command,
  type Context,
  EXIT,
  limitOf,
  pageSize,
  readJsonFile,
  str,
  UsageError,
} from './command.ts';
import { type Column, take } from './output.ts';
import { ProgressBar } from './progress.ts';

const FILE = { file: { type: 'string', short: 'f' } } as const;

const JOB_COLUMNS: Column<JobListItem>[] = [
  { header: 'job_id', value: (j) => j.job_id },
  { header: 'status', value: (j) => j.status },
  { header: 'last_run', value: (j) => j.last_run },
  { header: 'results', value: (j) => j.results_count },
  { header: 'next_run_at', value: (j) => j.next_run_at },
  { header: 'name', value: (j) => j.name },
];

function fileOf(ctx: Context): string {
  const file = str(ctx.values, 'file');
  if (!file) throw new UsageError('-f <file.json> is required (- reads standard input)');
  return file;
}

/** A job after an action: the detail with `--json`, one line otherwise. */
function printJob(ctx: Context, job: JobDetail, what: string): undefined {
  if (ctx.out.json) ctx.out.value(job);
  else ctx.out.line(`${job.job_id} ${what} (status ${job.status})`);
  return undefined;
}

/** `N seconds` from an option, as ms. */
function secondsOf(ctx: Context, name: string): number | undefined {
  const raw = str(ctx.values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--${name} must be a number of seconds > 0, got "${raw}"`);
  return n * 1000;
}

function runLine(run: Run): string {
  const counts = `${run.successful_urls} URLs ok, ${run.failed_urls} failed, ${run.skipped_urls} skipped`;
  const error = run.error ? `: ${run.error.code} ${run.error.message}` : '';
  return `${run.run_id} ${run.status}: ${run.results_count} results, ${counts}, ${run.duration_ms ?? '-'} ms${error}`;
}

/** Polls the run to its end, drawing its URLs done out of those accepted. */
async function waitForRun(ctx: Context, jobId: string, runId: string): Promise<number> {
  const bar = new ProgressBar(ctx.streams.stderr, runId, ctx.progress);
  const started = Date.now();
  const draw = async (run: Run, final: boolean) => {
    if (!ctx.progress) return;
    const done = run.successful_urls + run.failed_urls + run.skipped_urls;
    let total: number | null = done;
    if (run.status === 'running') {
      // URLs not fetched yet; one page answers it exactly unless more than 1000 are waiting.
      const pending = await ctx.client.runs.urls(jobId, runId, { status: 'pending', limit: 1000 });
      total = pending.next_cursor ? null : done + pending.count;
    }
    const text = `${done}${total === null ? '' : `/${total}`} URLs (${run.successful_urls} ok, ${run.failed_urls} failed) ${Math.round((Date.now() - started) / 1000)} s`;
    if (final) bar.finish(done, total, text);
    else bar.update(done, total, text, true);
  };
  let run: Run;
  try {
    run = await ctx.client.runs.wait(jobId, runId, {
      intervalMs: secondsOf(ctx, 'interval') ?? 1000,
      timeoutMs: secondsOf(ctx, 'timeout'),
      onPoll: (r) => draw(r, r.status !== 'running'),
    });
  } catch (err) {
    if (!(err instanceof WaitTimeoutError)) throw err;
    await draw(err.run, true);
    ctx.streams.stderr.write(`scrapejobs: ${err.message}\n`);
    return EXIT.runFailed;
  }
  if (ctx.out.json) ctx.out.value(run);
  else ctx.out.line(runLine(run));
  return run.status === 'success' ? EXIT.ok : EXIT.runFailed;
}

export const jobCommands: Record<string, Command> = {
  'jobs create': {
    usage: 'jobs create -f <job.json>',
    summary: 'create a job from a JSON file (- for standard input)',
    options: FILE,
    async run(ctx) {
      const body = (await readJsonFile(fileOf(ctx), ctx.streams.stdin)) as CreateJobRequest;
      return printJob(ctx, await ctx.client.jobs.create(body), 'created');
    },
  },
  'jobs list': {
    usage: 'jobs list [--status <status>] [--limit <n>]',
    summary: 'list jobs, newest first',
    options: { status: { type: 'string' }, limit: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const status = str(ctx.values, 'status') as JobListItem['status'] | undefined;
      await ctx.out.list(
        take(ctx.client.jobs.iterate({ status, limit: pageSize(limit) }), limit),
        () => JOB_COLUMNS,
      );
      return undefined;
    },
  },
  'jobs get': {
    usage: 'jobs get <job_id>',
    summary: "show a job's settings and state",
    args: ['job_id'],
    async run(ctx) {
      ctx.out.record(await ctx.client.jobs.get(ctx.args[0]!));
      return undefined;
    },
  },
  'jobs update': {
    usage: 'jobs update <job_id> -f <changes.json>',
    summary: 'change some fields of a job (omitted fields keep their values)',
    args: ['job_id'],
    options: FILE,
    async run(ctx) {
      const body = (await readJsonFile(fileOf(ctx), ctx.streams.stdin)) as UpdateJobRequest;
      return printJob(ctx, await ctx.client.jobs.update(ctx.args[0]!, body), 'updated');
    },
  },
  'jobs run': {
    usage: 'jobs run <job_id> [--wait [--interval <s>] [--timeout <s>]]',
    summary: 'start a run; --wait follows it to its end and exits 1 unless it succeeded',
    args: ['job_id'],
    options: { wait: { type: 'boolean' }, interval: { type: 'string' }, timeout: { type: 'string' } },
    async run(ctx) {
      const accepted = await ctx.client.jobs.run(ctx.args[0]!);
      if (ctx.values.wait) return waitForRun(ctx, accepted.job_id, accepted.run_id);
      if (ctx.out.json) ctx.out.value(accepted);
      else ctx.out.line(`${accepted.run_id} started (job ${accepted.job_id})`);
      return undefined;
    },
  },
  'jobs pause': {
    usage: 'jobs pause <job_id>',
    summary: 'pause a job (a running run is cancelled)',
    args: ['job_id'],
    run: async (ctx) => printJob(ctx, await ctx.client.jobs.pause(ctx.args[0]!), 'paused'),
  },
  'jobs resume': {
    usage: 'jobs resume <job_id>',
    summary: 'resume a paused job',
    args: ['job_id'],
    run: async (ctx) => printJob(ctx, await ctx.client.jobs.resume(ctx.args[0]!), 'resumed'),
  },
  'jobs delete': {
    usage: 'jobs delete <job_id>',
    summary: 'delete a job with its runs and results',
    args: ['job_id'],
    async run(ctx) {
      const jobId = ctx.args[0]!;
      await ctx.client.jobs.delete(jobId);
      if (ctx.out.json) ctx.out.value({ job_id: jobId, deleted: true });
      else ctx.out.line(`${jobId} deleted`);
      return undefined;
    },
  },
};
