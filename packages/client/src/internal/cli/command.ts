import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import type { ScrapeJobs } from '../client.ts';
import type { Output } from './output.ts';

/** What the command line tool exits with (listed by `--help`, documented in the README). */
export const EXIT = {
  ok: 0,
  runFailed: 1,
  usage: 2,
  refused: 3,
  auth: 4,
  unavailable: 5,
  internal: 70,
} as const;

export const EXIT_MEANINGS: Record<(typeof EXIT)[keyof typeof EXIT], string> = {
  0: 'done',
  1: 'jobs run --wait: the run ended failed or cancelled, or was still running at --timeout',
  2: 'bad usage or input: unknown command or option, missing argument, environment variable unset or invalid, a file that cannot be read or is not JSON',
  3: 'the API refused the request (400 validation_error, 404 not_found, 409 conflict, …)',
  4: 'the API key was refused (401 unauthorized) or lacks the scope (403 forbidden)',
  5: 'the API could not be reached, or stayed unavailable (429 or 503 after retries, 5xx, an unreadable answer)',
  70: 'an internal error of this tool',
};

/** A problem with what the user typed or gave; exits with `usage` and one line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Streams {
  stdin: Readable;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
}

export type Values = Record<string, string | boolean | undefined>;

export interface Context {
  client: ScrapeJobs;
  args: string[];
  values: Values;
  out: Output;
  streams: Streams;
  /** Progress bars are drawn on a terminal, or when `--progress` asks for them. */
  progress: boolean;
  env: Record<string, string | undefined>;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

export interface Command {
  /** `jobs create -f <job.json>`: shown in the usage. */
  usage: string;
  summary: string;
  /** Names of the positional arguments, all required. */
  args?: string[];
  options?: Record<string, OptionSpec>;
  run(ctx: Context): Promise<number | undefined>;
}

export const str = (values: Values, name: string): string | undefined => {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
};

/** `--limit`: a whole number ≥ 1, or undefined. */
export function limitOf(values: Values): number | undefined {
  const raw = str(values, 'limit');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`--limit must be a whole number ≥ 1, got "${raw}"`);
  return Number(raw);
}

/** Page size for a listing capped at `limit` items: no larger than needed, at most the API's 1000. */
export const pageSize = (limit: number | undefined) => Math.min(limit ?? 1000, 1000);

/** The JSON of a file (or of standard input for `-`), with a one-line message naming what is wrong. */
export async function readJsonFile(path: string, stdin: Readable): Promise<unknown> {
  let text: string;
  try {
    if (path === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
      text = Buffer.concat(chunks).toString('utf8');
    } else text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? (err as Error).message)}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path === '-' ? 'standard input' : path} is not JSON: ${(err as Error).message}`);
  }
}
