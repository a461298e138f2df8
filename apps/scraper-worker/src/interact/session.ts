import type { Logger } from '@scrapejobs/logging';
import {
  type InteractAnswer,
  type InteractCommand,
  type InteractSessionStore,
  SESSION_HEARTBEAT_MS,
} from '@scrapejobs/queues';
import type { Redis } from 'ioredis';
import type { Renderer, RenderRequest, SessionPage } from '../render/index.ts';
import { PageChannel, pageGone, runCode } from './run-code.ts';

/** The bounds of a worker's sessions (INTERACT_* settings). */
export interface SessionLimits {
  /** A session without a command for this long ends. */
  idleMs: number;
  /** A session ends this long after it opened, whatever it does. */
  maxLifeMs: number;
  /** Characters of console output a call keeps. */
  maxOutput: number;
  /** Characters of a call's result kept. */
  maxResult: number;
}

export interface SessionDeps {
  store: InteractSessionStore;
  /** A Redis connection of the session's own, for its blocking reads; disconnected at its end. */
  blocking: () => Redis;
  renderer: () => Promise<Renderer>;
  /** How the scrape's page opens (its URL and its job's options); null when the scrape is gone. */
  pageRequest: (scrapeId: string, userId: string) => Promise<RenderRequest | null>;
  limits: SessionLimits;
  /** This worker's name, kept in the session's record. */
  worker: string;
  log: Logger;
}

export interface SessionTicket {
  sessionId: string;
  scrapeId: string;
  userId: string;
}

/** How often a session waiting for a command looks at its idle time, its life and the shutdown. */
const POLL_MS = 1_000;

/**
 * Serves one interact session on this worker until it ends: takes it (unless it is no longer
 * wanted), opens the scrape's page, then runs each command sent to it, in order, until a stop,
 * `limits.idleMs` without a command, `limits.maxLifeMs`, the page's loss or `shutdown`. A session
 * that ends on its own keeps why for the scrape's next call; commands left are answered so.
 */
export async function serveSession(
  deps: SessionDeps,
  ticket: SessionTicket,
  shutdown: AbortSignal,
): Promise<void> {
  const { store, log, limits } = deps;
  const { sessionId, scrapeId, userId } = ticket;
  if (!(await store.take(scrapeId, sessionId, deps.worker))) return;
  let given = false;
  const beat = () =>
    store.heartbeat(scrapeId, userId, sessionId).then(
      (kept) => {
        given ||= !kept;
      },
      (err: Error) => log.warn({ err: err.message, session: sessionId }, 'interact session heartbeat failed'),
    );
  const heartbeat = setInterval(beat, SESSION_HEARTBEAT_MS);
  const blocking = deps.blocking();
  let opened: SessionPage | null = null;
  const started = Date.now();
  try {
    let channel: PageChannel;
    try {
      const request = await deps.pageRequest(scrapeId, userId);
      if (!request) throw new Error('the scrape is gone');
      opened = await (await deps.renderer()).openSession(request);
      channel = await PageChannel.attach(opened.page, 2 * limits.maxOutput + 1_000);
    } catch (err) {
      const reason = `the page could not be opened: ${(err as Error).message}`;
      // Forgotten, so the scrape's next call tries again.
      await store.end(scrapeId, userId, sessionId, 'gone');
      await answerLeft(store, sessionId, { kind: 'failed', reason }, started);
      return;
    }
    await beat();
    log.info({ session: sessionId, scrape_id: scrapeId }, 'interact session opened');
    const { page } = opened;
    let lastUsed = Date.now();
    /** Why the session ends now, or null while it goes on. */
    const endReason = (): string | null => {
      if (given) return 'the session was stopped';
      if (shutdown.aborted) return 'the worker serving it shut down';
      if (Date.now() - lastUsed >= limits.idleMs) return `it had no command for ${limits.idleMs / 1000} s`;
      if (Date.now() - started >= limits.maxLifeMs)
        return `it reached its longest life of ${limits.maxLifeMs / 1000} s`;
      if (pageGone(page)) return 'its page closed (the browser stopped)';
      return null;
    };
    let reason: string | null = null;
    for (;;) {
      reason ??= endReason();
      if (reason !== null) break;
      const command = await store.nextCommand(blocking, sessionId, POLL_MS);
      if (!command) continue;
      if (command.type === 'stop') {
        await store.end(scrapeId, userId, sessionId, 'gone');
        await store.reply(command.id, { kind: 'stopped', sessionMs: Date.now() - started });
        await answerLeft(store, sessionId, { kind: 'ended', reason: 'the session was stopped' }, started);
        log.info({ session: sessionId, scrape_id: scrapeId }, 'interact session stopped');
        return;
      }
      try {
        const answer = await runCode(page, channel, command.code, {
          ...limits,
          timeoutMs: command.timeoutMs,
        });
        await store.reply(command.id, answer);
      } catch (err) {
        reason = `its page closed while the code ran (${(err as Error).message})`;
        await store.reply(command.id, { kind: 'ended', reason });
      }
      lastUsed = Date.now();
    }
    await store.end(scrapeId, userId, sessionId, 'ended', reason);
    await answerLeft(store, sessionId, { kind: 'ended', reason }, started);
    log.info({ session: sessionId, scrape_id: scrapeId, reason }, 'interact session ended');
  } finally {
    clearInterval(heartbeat);
    blocking.disconnect();
    opened?.close();
  }
}

/** Answers the commands still queued: a stop as done, any other with `answer`. */
async function answerLeft(
  store: InteractSessionStore,
  sessionId: string,
  answer: InteractAnswer,
  started: number,
): Promise<void> {
  const left: InteractCommand[] = await store.drain(sessionId);
  for (const command of left)
    await store.reply(
      command.id,
      command.type === 'stop' ? { kind: 'stopped', sessionMs: Date.now() - started } : answer,
    );
}
