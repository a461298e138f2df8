// keys create --user <email> [--mode test|live] [--scopes a,b] [--name label]
// keys list --user <email> | keys revoke <key_id> | keys regenerate <key_id>
import { parseArgs } from 'node:util';
import { commonEnv, parseConfig } from '@scrapejobs/config';
import { createDatabase } from '@scrapejobs/db';
import { AppError, KEY_CACHE_TTL_MS, KeysService, parseScopes, redisKeyChanges } from '@scrapejobs/domain';
import { Redis } from 'ioredis';
import { z } from 'zod';

const USAGE = `usage:
  keys create --user <email> [--mode test|live] [--scopes jobs:read,jobs:write,webhooks:read,webhooks:write] [--name label]
  keys list --user <email>
  keys revoke <key_id>
  keys regenerate <key_id>`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      mode: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
    },
  });
  const [command, keyId] = positionals;
  const config = parseConfig(
    z.object({
      DATABASE_URL: commonEnv.DATABASE_URL,
      REDIS_URL: commonEnv.REDIS_URL,
      QUEUE_PREFIX: commonEnv.QUEUE_PREFIX,
    }),
    process.env,
  );
  const db = createDatabase({ url: config.DATABASE_URL, max: 1 });
  // Revoke and regenerate tell the running API processes, which cache keys, over Redis.
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
  });
  redis.on('error', () => {});
  const keys = new KeysService(
    db,
    redisKeyChanges(redis, config.QUEUE_PREFIX, {
      onError: (err, id) =>
        console.error(
          `keys: warning: ${id} is revoked, but the running API processes could not be told (Redis: ${err.message}); they accept it for at most ${KEY_CACHE_TTL_MS / 1000} s more`,
        ),
    }),
  );
  try {
    if (command === 'create' && values.user) {
      const mode = values.mode ?? 'test';
      if (mode !== 'test' && mode !== 'live') throw new Error('--mode must be test or live');
      const { key, token } = await keys.create({
        email: values.user,
        mode,
        scopes: parseScopes(values.scopes),
        name: values.name ?? 'default',
      });
      console.log(`created ${key.key_id} (${key.mode}, ${key.scopes.join(',')}) for ${values.user}`);
      console.log('the token is shown once; store it now:');
      console.log(token);
    } else if (command === 'list' && values.user) {
      for (const k of await keys.list(values.user)) {
        const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
        console.log(
          `${k.key_id}\t${k.prefix}…\t${k.mode}\t${k.scopes.join(',')}\t${k.name}\t${state}\tlast used ${k.last_used_at ?? 'never'}`,
        );
      }
    } else if (command === 'revoke' && keyId) {
      console.log(`revoked ${(await keys.revoke(keyId)).key_id}`);
    } else if (command === 'regenerate' && keyId) {
      const { key, token } = await keys.regenerate(keyId);
      console.log(
        `regenerated ${keyId} as ${key.key_id}; the old token no longer works. New token (shown once):`,
      );
      console.log(token);
    } else {
      console.error(USAGE);
      return 2;
    }
    return 0;
  } catch (err) {
    const details =
      err instanceof AppError && err.extra.details ? ` ${JSON.stringify(err.extra.details)}` : '';
    console.error(`keys: ${(err as Error).message}${details}`);
    return 1;
  } finally {
    redis.disconnect();
    await db.$disconnect();
    await db.pool.end();
  }
}

process.exitCode = await main(process.argv.slice(2));
