import type { Redis } from 'ioredis';
import { z } from 'zod';
import { LuaScript, REDIS_NOW } from './lua.ts';

/**
 * Interact sessions (docs/api.md §18): a live page of a finished scrape, kept on one scraper
 * worker, that runs the code the API sends it. The API claims a session for a scrape and queues
 * its opening; the worker that takes the opening serves the session's commands from a Redis list
 * and answers each on a key of its own. Everything here expires, so nothing outlives its use.
 */

/** A command for a session: run code in its page, or stop it. */
export const interactCommandSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run'), id: z.string(), code: z.string(), timeoutMs: z.number() }),
  z.object({ type: z.literal('stop'), id: z.string() }),
]);
export type InteractCommand = z.infer<typeof interactCommandSchema>;

/** What running code in the page gave. */
export const interactRunSchema = z.object({
  kind: z.literal('ran'),
  stdout: z.string(),
  stderr: z.string(),
  /** The code's return value as text (a string as it is, anything else as JSON); null: none. */
  result: z.string().nullable(),
  exitCode: z.number(),
  killed: z.boolean(),
  truncated: z.boolean(),
  error: z.string().nullable(),
  /** The page's URL after the code. */
  url: z.string(),
});
export type InteractRun = z.infer<typeof interactRunSchema>;

/** A session's answer to one command. */
export const interactAnswerSchema = z.discriminatedUnion('kind', [
  interactRunSchema,
  z.object({ kind: z.literal('stopped'), sessionMs: z.number() }),
  /** The session ended before it ran the command; `reason` says why. */
  z.object({ kind: z.literal('ended'), reason: z.string() }),
  /** The session could not open its page. */
  z.object({ kind: z.literal('failed'), reason: z.string() }),
]);
export type InteractAnswer = z.infer<typeof interactAnswerSchema>;

export type SessionState = 'opening' | 'open' | 'ended';

/** A scrape's session as its record says. */
export interface SessionLook {
  sessionId: string;
  state: SessionState;
  /** Why it ended, for an ended one. */
  reason: string;
  /** When it was claimed, then when a worker took it (ms, Redis's clock). */
  openedAt: number;
  /** Whether its worker showed signs of life lately (always false before one took it). */
  alive: boolean;
}

/** A session as the claim of a scrape's session finds it. */
export type SessionClaim =
  | { kind: 'new'; sessionId: string }
  | ({ kind: 'existing' } & SessionLook)
  | { kind: 'full' };

/** A session's record lives this long after its last sign of life (its ended state is read once). */
const RECORD_TTL_MS = 15 * 60_000;
/** The worker serving a session renews its sign of life this often… */
export const SESSION_HEARTBEAT_MS = 5_000;
/** …and a session whose sign of life is this old is taken for dead (its worker stopped). */
const ALIVE_TTL_MS = 3 * SESSION_HEARTBEAT_MS;
/** An answer nobody reads is dropped after this long. */
const ANSWER_TTL_MS = 60_000;

const keys = (prefix: string) => ({
  record: (scrapeId: string) => `${prefix}:interact:session:${scrapeId}`,
  user: (userId: string) => `${prefix}:interact:user:${userId}`,
  commands: (sessionId: string) => `${prefix}:interact:commands:${sessionId}`,
  alive: (sessionId: string) => `${prefix}:interact:alive:${sessionId}`,
  answer: (commandId: string) => `${prefix}:interact:answer:${commandId}`,
});

// KEYS: record, user's sessions. ARGV: session id, user id, limit, ms to open, scrape id.
// The user's sessions are a sorted set of scrape ids scored by when their sign of life expires.
const CLAIM = new LuaScript(`${REDIS_NOW}
if redis.call('EXISTS', KEYS[1]) == 1 then return {'existing'} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZSCORE', KEYS[2], ARGV[5]) == false and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  return {'full'}
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'user', ARGV[2], 'state', 'opening', 'opened', now)
redis.call('PEXPIRE', KEYS[1], ${RECORD_TTL_MS})
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[5])
redis.call('PEXPIRE', KEYS[2], ${RECORD_TTL_MS})
return {'new', ARGV[1]}`);

// KEYS: record, alive. ARGV: session id, worker. Takes an opening session; 0 when it is not that one's.
const TAKE = new LuaScript(`${REDIS_NOW}
local f = redis.call('HMGET', KEYS[1], 'id', 'state')
if f[1] ~= ARGV[1] or f[2] ~= 'opening' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open', 'worker', ARGV[2], 'opened', now)
redis.call('SET', KEYS[2], '1', 'PX', ${ALIVE_TTL_MS})
return 1`);

// KEYS: record, alive, user's sessions. ARGV: session id, scrape id, ms of life, ms of record.
// A session's sign of life, while its record is still its own (1), else 0: it was stopped or given up.
const HEARTBEAT = new LuaScript(`${REDIS_NOW}
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1`);

// KEYS: record, alive, user's sessions. ARGV: session id, scrape id, state, reason.
// Ends the session when the record is still its own: 'ended' keeps the reason for the next call,
// 'gone' removes the record (a stop, a failed opening).
const END = new LuaScript(`
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
if ARGV[3] == 'gone' then redis.call('DEL', KEYS[1]) return 1 end
redis.call('HSET', KEYS[1], 'state', 'ended', 'reason', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ${RECORD_TTL_MS})
return 1`);

/** The sessions' records and mailboxes in Redis under `prefix`; `redis` runs no blocking command. */
export class InteractSessionStore {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof keys>;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#keys = keys(prefix);
  }

  /**
   * The user's session of the scrape, or a new one in state `opening` (which expires from the
   * user's count after `openMs` unless a worker takes it), or `full` when the user has `limit`
   * sessions opening or open.
   */
  async claim(
    scrapeId: string,
    userId: string,
    sessionId: string,
    limit: number,
    openMs: number,
  ): Promise<SessionClaim> {
    const k = this.#keys;
    const reply = (await CLAIM.run(
      this.#redis,
      2,
      k.record(scrapeId),
      k.user(userId),
      sessionId,
      userId,
      limit,
      openMs,
      scrapeId,
    )) as string[];
    if (reply[0] === 'full') return { kind: 'full' };
    if (reply[0] === 'new') return { kind: 'new', sessionId };
    const found = await this.look(scrapeId);
    // Ended between the two looks: a new claim finds no record.
    return found ? { kind: 'existing', ...found } : this.claim(scrapeId, userId, sessionId, limit, openMs);
  }

  /** Queues a command; returns how many commands wait for the session, this one included. */
  async send(sessionId: string, command: InteractCommand, first = false): Promise<number> {
    const key = this.#keys.commands(sessionId);
    const json = JSON.stringify(command);
    const [[, length]] = (await this.#redis
      .multi()
      [first ? 'lpush' : 'rpush'](key, json)
      .pexpire(key, RECORD_TTL_MS)
      .exec()) as [[unknown, number]];
    return length;
  }

  /** Takes a command back that no worker took yet; false when a worker took it. */
  async withdraw(sessionId: string, command: InteractCommand): Promise<boolean> {
    return (await this.#redis.lrem(this.#keys.commands(sessionId), 1, JSON.stringify(command))) > 0;
  }

  /** The answer to a command, waiting at most `ms` on `blocking` (a connection of its own); null on none. */
  async answer(blocking: Redis, commandId: string, ms: number): Promise<InteractAnswer | null> {
    const got = await blocking.blpop(this.#keys.answer(commandId), Math.max(0.01, ms / 1000));
    return got ? interactAnswerSchema.parse(JSON.parse(got[1])) : null;
  }

  /** The next command for the session, waiting at most `ms` on `blocking`; null on none. */
  async nextCommand(blocking: Redis, sessionId: string, ms: number): Promise<InteractCommand | null> {
    const got = await blocking.blpop(this.#keys.commands(sessionId), Math.max(0.01, ms / 1000));
    return got ? interactCommandSchema.parse(JSON.parse(got[1])) : null;
  }

  /** Answers a command. */
  async reply(commandId: string, answer: InteractAnswer): Promise<void> {
    const key = this.#keys.answer(commandId);
    await this.#redis.multi().rpush(key, JSON.stringify(answer)).pexpire(key, ANSWER_TTL_MS).exec();
  }

  /** A worker takes an opening session; false when it is no longer that session (stopped, given up). */
  async take(scrapeId: string, sessionId: string, worker: string): Promise<boolean> {
    const k = this.#keys;
    return (await TAKE.run(this.#redis, 2, k.record(scrapeId), k.alive(sessionId), sessionId, worker)) === 1;
  }

  /**
   * The serving worker's sign of life: the session stays open and counted for its user. False
   * when the scrape's session is no longer this one (stopped or given up): it is to end.
   */
  async heartbeat(scrapeId: string, userId: string, sessionId: string): Promise<boolean> {
    const keys = this.#sessionKeys(scrapeId, userId, sessionId);
    return (
      (await HEARTBEAT.run(this.#redis, 3, ...keys, sessionId, scrapeId, ALIVE_TTL_MS, RECORD_TTL_MS)) === 1
    );
  }

  /** The scrape's session as its record says, and whether its worker shows signs of life; null: none. */
  async look(scrapeId: string): Promise<SessionLook | null> {
    const [id, state, reason, opened] = await this.#redis.hmget(
      this.#keys.record(scrapeId),
      'id',
      'state',
      'reason',
      'opened',
    );
    if (!id) return null;
    const alive = (await this.#redis.exists(this.#keys.alive(id))) === 1;
    return {
      sessionId: id,
      state: state as SessionState,
      reason: reason ?? '',
      openedAt: Number(opened),
      alive,
    };
  }

  /**
   * Ends the session: `ended` keeps `reason` for the scrape's next call to read once, `gone`
   * forgets it (the next call opens a new session). Commands still queued are dropped.
   */
  async end(
    scrapeId: string,
    userId: string,
    sessionId: string,
    how: 'ended' | 'gone',
    reason = '',
  ): Promise<void> {
    await END.run(
      this.#redis,
      3,
      ...this.#sessionKeys(scrapeId, userId, sessionId),
      sessionId,
      scrapeId,
      how,
      reason,
    );
  }

  /** A session's record, sign of life and its user's sessions: the keys of HEARTBEAT and END. */
  #sessionKeys(scrapeId: string, userId: string, sessionId: string): [string, string, string] {
    const k = this.#keys;
    return [k.record(scrapeId), k.alive(sessionId), k.user(userId)];
  }

  /** Commands queued for a session and not taken, removed (to be answered by whoever ends it). */
  async drain(sessionId: string): Promise<InteractCommand[]> {
    const key = this.#keys.commands(sessionId);
    const [[, items]] = (await this.#redis.multi().lrange(key, 0, -1).del(key).exec()) as [
      [unknown, string[]],
    ];
    return items.map((item) => interactCommandSchema.parse(JSON.parse(item)));
  }
}
