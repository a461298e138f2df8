// account create --email <email> --password-stdin
// account set-password --email <email> --password-stdin
import { parseArgs } from 'node:util';
import { parseConfig } from '@scrapejobs/config';
import { createDatabase } from '@scrapejobs/db';
import { AccountError, Accounts } from '@scrapejobs/domain';
import { accountCliEnvSchema } from '../config.ts';

const USAGE = `usage:
  account create --email <email> --password-stdin        create a console account (the first one too)
  account set-password --email <email> --password-stdin  set a new password; signs out every session
The password is read from standard input (one line), never from the command line.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: a trailing newline (from echo or a here-string) is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function main(argv: string[]): Promise<number> {
  let parsed: { positionals: string[]; values: { email?: string; 'password-stdin'?: boolean } };
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    });
  } catch (err) {
    console.error(`account: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command] = positionals;
  if ((command !== 'create' && command !== 'set-password') || !values.email || !values['password-stdin']) {
    console.error(USAGE);
    return 2;
  }
  const password = await readStdin();
  const config = parseConfig(accountCliEnvSchema, process.env);
  const db = createDatabase({ url: config.DATABASE_URL, max: 1 });
  try {
    const accounts = new Accounts(db);
    const account =
      command === 'create'
        ? await accounts.create(values.email, password)
        : await accounts.setPassword(values.email, password);
    console.log(
      command === 'create'
        ? `created console account ${account.email} (${account.userId}); sign in at /console/login`
        : `password set for ${account.email}; its earlier sessions are signed out`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof AccountError)) throw err;
    console.error(`account: ${err.message}`);
    return 1;
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
}

process.exitCode = await main(process.argv.slice(2));
