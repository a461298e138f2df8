import { randomUUID } from 'node:crypto';
import { AppError } from '@scrapejobs/domain';
import { INTERACT_MAX_TIMEOUT_S } from '@scrapejobs/firecrawl';
import type {
  createQueue,
  InteractAnswer,
  InteractCommand,
  InteractRun,
  InteractSessionStore,
  SessionLook,
} from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

export interface InteractDeps {
  store: InteractSessionStore;
  queue: ReturnType<typeof createQueue<'interactSessions'>>;
  /** A Redis connection for one blocking wait (no command timeout); disconnected after it. */
  blocking: () => Redis;
  /** INTERACT_SESSIONS_PER_USER: sessions one account has opening or open at most. */
  sessionsPerUser: number;
}

/** How long the API waits, in ms. */
const WAIT = {
  /** A new session that no worker took within this long is given up (all workers' sessions are taken). */
  pickup: 15_000,
  /** The longest a worker takes to open a session's page (the job's navigation timeout at most). */
  open: 60_000,
  /** Beyond a call's own time limit: the settling after the code, the answer's way back. */
  margin: 5_000,
  /** Firecrawl's longest time limit of a call, which a call queued ahead may take. */
  longestCall: INTERACT_MAX_TIMEOUT_S * 1000,
  /** How long a wait for an answer blocks before it looks at the session again. */
  look: 5_000,
  /** How long a stop waits for the worker to close the page. */
  stop: 10_000,
} as const;
/** Calls waiting for one session at most (the one running included). */
const MAX_WAITING = 3;

const ENDED = 'The interact session of this scrape ended';

/** Whether a session is over: ended, or open with its worker's sign of life gone. */
const over = (look: SessionLook) => look.state === 'ended' || (look.state === 'open' && !look.alive);

/**
 * Interact sessions as the compatible API runs them (docs/api.md §18): the scrape's owner's code
 * goes to the one worker that serves the scrape's session, opened on first use.
 */
export class InteractService {
  readonly #deps: InteractDeps;

  constructor(deps: InteractDeps) {
    this.#deps = deps;
  }

  /** Runs `code` in the scrape's session, opening one when it has none. Throws AppError. */
  async run(scrapeId: string, userId: string, code: string, timeoutMs: number): Promise<InteractRun> {
    const { store, queue, sessionsPerUser } = this.#deps;
    const claim = await store.claim(scrapeId, userId, randomUUID(), sessionsPerUser, WAIT.pickup + WAIT.open);
    if (claim.kind === 'full')
      throw new AppError(
        429,
        `This account has ${sessionsPerUser} interact sessions open, the most it may have; stop one first (DELETE /v2/scrape/{id}/interact).`,
      );
    if (claim.kind === 'existing') await this.#endedCheck(scrapeId, userId, claim);
    const { sessionId } = claim;
    if (claim.kind === 'new') await queue.add('open', { sessionId, scrapeId, userId }, { jobId: sessionId });
    const command: InteractCommand = { type: 'run', id: randomUUID(), code, timeoutMs };
    const waiting = await store.send(sessionId, command);
    if (waiting > MAX_WAITING && (await store.withdraw(sessionId, command)))
      throw new AppError(
        429,
        `${MAX_WAITING} calls already wait for this interact session; send one at a time.`,
      );
    const opening = claim.kind === 'new' || claim.state === 'opening';
    const answer = await this.#answer(scrapeId, userId, sessionId, command, {
      pickupBy: opening ? Date.now() + WAIT.pickup : null,
      deadline:
        Date.now() +
        (opening ? WAIT.pickup + WAIT.open : 0) +
        timeoutMs +
        WAIT.margin +
        (waiting - 1) * (WAIT.longestCall + WAIT.margin),
    });
    switch (answer.kind) {
      case 'ran':
        return answer;
      case 'failed':
        throw new AppError(502, `The interact session could not open the scrape's page: ${answer.reason}.`);
      case 'ended':
        throw new AppError(410, `${ENDED}: ${answer.reason}. The next call opens a new one.`);
      case 'stopped':
        throw new AppError(410, `${ENDED}: it was stopped. The next call opens a new one.`);
    }
  }

  /** Stops the scrape's session; its length when the worker answered. Throws 404 when there is none. */
  async stop(scrapeId: string, userId: string): Promise<{ sessionMs: number | null }> {
    const { store, queue } = this.#deps;
    const look = await store.look(scrapeId);
    if (!look) throw new AppError(404, 'No interact session is open for this scrape.');
    const forget = () => store.end(scrapeId, userId, look.sessionId, 'gone');
    if (over(look)) {
      await forget();
      return { sessionMs: null };
    }
    if (look.state === 'opening') {
      // No worker took it yet: forgotten, the worker that takes it finds it gone.
      await forget();
      await queue.remove(look.sessionId).catch(() => 0);
      return { sessionMs: null };
    }
    const command: InteractCommand = { type: 'stop', id: randomUUID() };
    await store.send(look.sessionId, command, true);
    const blocking = this.#deps.blocking();
    try {
      const answer = await store.answer(blocking, command.id, WAIT.stop);
      if (answer?.kind === 'stopped') return { sessionMs: answer.sessionMs };
    } finally {
      blocking.disconnect();
    }
    // The worker is busy with a long call or gone: forgotten here, it ends the page when it sees so.
    await store.withdraw(look.sessionId, command);
    await forget();
    return { sessionMs: null };
  }

  /** An existing session that ended (or whose worker died) answers 410 once and is forgotten. */
  async #endedCheck(scrapeId: string, userId: string, look: SessionLook): Promise<void> {
    if (!over(look)) return;
    await this.#deps.store.end(scrapeId, userId, look.sessionId, 'gone');
    const reason = look.state === 'open' ? 'the worker serving it stopped' : look.reason;
    throw new AppError(410, `${ENDED}: ${reason}. The next call opens a new one.`);
  }

  /**
   * The command's answer. Between blocking waits it looks at the session: one that ended or whose
   * worker died, or that no worker took by `pickupBy`, ends the wait at once.
   */
  async #answer(
    scrapeId: string,
    userId: string,
    sessionId: string,
    command: InteractCommand,
    by: { pickupBy: number | null; deadline: number },
  ): Promise<InteractAnswer> {
    const { store, queue } = this.#deps;
    const blocking = this.#deps.blocking();
    try {
      for (;;) {
        const left = by.deadline - Date.now();
        const answer = await store.answer(blocking, command.id, Math.max(1, Math.min(WAIT.look, left)));
        if (answer) return answer;
        const look = await store.look(scrapeId);
        if (look?.sessionId !== sessionId) {
          await store.withdraw(sessionId, command);
          throw new AppError(410, `${ENDED}. The next call opens a new one.`);
        }
        if (over(look)) {
          await store.withdraw(sessionId, command);
          await this.#endedCheck(scrapeId, userId, look);
        }
        if (look.state === 'opening' && by.pickupBy !== null && Date.now() >= by.pickupBy) {
          await store.withdraw(sessionId, command);
          await store.end(scrapeId, userId, sessionId, 'gone');
          await queue.remove(sessionId).catch(() => 0);
          throw new AppError(
            503,
            `No worker could open an interact session within ${WAIT.pickup / 1000} s (every worker's sessions are in use); try again later.`,
          );
        }
        if (Date.now() >= by.deadline) {
          await store.withdraw(sessionId, command);
          throw new AppError(504, 'The interact session did not answer in time.');
        }
      }
    } finally {
      blocking.disconnect();
    }
  }
}
