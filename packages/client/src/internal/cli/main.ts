import { parseArgs } from 'node:util';
import { ScrapeJobs } from '../client.ts';
import { ApiError, ConnectionError, ScrapeJobsError } from '../errors.ts';
import { CLIENT_VERSION } from '../transport.ts';
import { type Command, EXIT, EXIT_MEANINGS, type Streams, UsageError, type Values } from './command.ts';
import { documentCommands } from './documents.ts';
import { jobCommands } from './jobs.ts';
import { Output } from './output.ts';
import { runCommands } from './runs.ts';
import { webhookCommands } from './webhooks.ts';

const COMMANDS: Record<string, Command> = {
  ...jobCommands,
  ...runCommands,
  ...documentCommands,
  ...webhookCommands,
};

const COMMON = {
  json: { type: 'boolean' },
  progress: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const USAGE = `usage: scrapejobs <command> [options]

${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.summary}`)
  .join('\n')}

Every command takes --json (print JSON instead of tables) and --progress (draw progress bars
on standard error even when it is not a terminal).

Environment:
  SCRAPEJOBS_API_KEY    the API key (sk_test_… or sk_live_…), required
  SCRAPEJOBS_BASE_URL   the API's address, such as http://localhost:3000, required

Exit codes:
${Object.entries(EXIT_MEANINGS)
  .map(([code, meaning]) => `  ${code.padEnd(3)} ${meaning}`)
  .join('\n')}`;

/** The command named by the first one or two words, and the words after it. */
function findCommand(argv: string[]): [Command, string[]] {
  const two = COMMANDS[`${argv[0]} ${argv[1]}`];
  if (two) return [two, argv.slice(2)];
  const one = COMMANDS[argv[0] ?? ''];
  if (one) return [one, argv.slice(1)];
  const words = argv.filter((a) => !a.startsWith('-')).slice(0, 2);
  throw new UsageError(`unknown command "${words.join(' ')}" (scrapejobs --help lists them)`);
}

export interface CommandLine {
  command: Command;
  values: Values;
  positionals: string[];
}

/** The command, options and arguments of a command line (after `scrapejobs`); a `UsageError` when wrong. */
export function parseCommandLine(argv: string[]): CommandLine {
  const [command, rest] = findCommand(argv);
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...COMMON, ...command.options }, allowPositionals: true });
  } catch (err) {
    // parseArgs explains at length; its first sentence names the problem.
    const first = (err as Error).message.split(/\.\s/)[0]!.replace(/\.$/, '');
    throw new UsageError(`${first} (usage: scrapejobs ${command.usage})`);
  }
  const names = command.args ?? [];
  const given = parsed.positionals;
  if (!parsed.values.help && given.length < names.length)
    throw new UsageError(`missing <${names[given.length]}> (usage: scrapejobs ${command.usage})`);
  if (given.length > names.length)
    throw new UsageError(`unexpected argument "${given[names.length]}" (usage: scrapejobs ${command.usage})`);
  return { command, ...parsed };
}

function clientFrom(env: Record<string, string | undefined>, streams: Streams): ScrapeJobs {
  const apiKey = env.SCRAPEJOBS_API_KEY;
  const baseUrl = env.SCRAPEJOBS_BASE_URL;
  if (!apiKey)
    throw new UsageError(
      'SCRAPEJOBS_API_KEY is not set: export an API key (pnpm keys create --user <email>)',
    );
  if (!baseUrl)
    throw new UsageError(
      'SCRAPEJOBS_BASE_URL is not set: export the API address, such as http://localhost:3000',
    );
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new UsageError(`SCRAPEJOBS_BASE_URL is not an http(s) URL: "${baseUrl}"`);
  return new ScrapeJobs({
    apiKey,
    baseUrl,
    onRetry: streams.stderr.isTTY
      ? (e) =>
          streams.stderr.write(
            `scrapejobs: ${e.error.code}, trying again in ${Math.ceil(e.delayMs / 1000)} s\n`,
          )
      : undefined,
  });
}

async function dispatch(argv: string[], env: Record<string, string | undefined>, streams: Streams) {
  const first = argv[0];
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    (first === undefined ? streams.stderr : streams.stdout).write(`${USAGE}\n`);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === '--version') {
    streams.stdout.write(`${CLIENT_VERSION}\n`);
    return EXIT.ok;
  }
  const { command, values, positionals } = parseCommandLine(argv);
  if (values.help) {
    streams.stdout.write(`usage: scrapejobs ${command.usage}\n  ${command.summary}\n`);
    return EXIT.ok;
  }
  const code = await command.run({
    client: clientFrom(env, streams),
    args: positionals,
    values,
    out: new Output(streams.stdout, values.json === true),
    streams,
    progress: values.progress === true || streams.stderr.isTTY === true,
    env,
  });
  return code ?? EXIT.ok;
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/** The one line printed for a failure, and the exit code it gives. */
function describeFailure(err: unknown): [string, number] {
  if (err instanceof UsageError) return [err.message, EXIT.usage];
  if (err instanceof ApiError) {
    const details = Object.entries(err.details ?? {}).map(([path, text]) => `${path}: ${text}`);
    const wait = err.retryAfter !== undefined ? ` (retry after ${err.retryAfter} s)` : '';
    const text = `${err.code} (HTTP ${err.status}): ${err.message}${details.length ? ` ${details.join('; ')}` : ''}${wait}`;
    const code =
      err.status === 401 || err.status === 403
        ? EXIT.auth
        : err.status === 429 || err.status >= 500
          ? EXIT.unavailable
          : EXIT.refused;
    return [text, code];
  }
  if (err instanceof ConnectionError) return [err.message, EXIT.unavailable];
  // The answer could not be read (not JSON, or cut): the service is not answering properly.
  if (err instanceof ScrapeJobsError) return [`${err.code}: ${err.message}`, EXIT.unavailable];
  return [`internal error: ${(err as Error)?.message ?? String(err)}`, EXIT.internal];
}

/** Runs the command line tool; resolves to its exit code, having printed any failure as one line. */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  streams: Streams,
): Promise<number> {
  try {
    return await dispatch(argv, env, streams);
  } catch (err) {
    const [text, code] = describeFailure(err);
    streams.stderr.write(`scrapejobs: ${oneLine(text)}\n`);
    return code;
  }
}
