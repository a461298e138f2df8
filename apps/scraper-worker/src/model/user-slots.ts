/**
 * Places for each user's model calls in this process: at most `perUser` at once, the others wait
 * in order. A wait ends with the caller's signal.
 */
export class UserSlots {
  readonly #perUser: number;
  readonly #users = new Map<string, { busy: number; waiting: (() => void)[] }>();

  constructor(perUser: number) {
    this.#perUser = perUser;
  }

  /** Resolves with the release of a place for `userId`; rejects with the signal's reason when it aborts first. */
  async take(userId: string, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    let user = this.#users.get(userId);
    if (!user) {
      user = { busy: 0, waiting: [] };
      this.#users.set(userId, user);
    }
    if (user.busy >= this.#perUser) {
      const entry = user;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          entry.waiting.splice(entry.waiting.indexOf(wake), 1);
          reject(signal.reason);
        };
        const wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        entry.waiting.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      // The place was handed over by its release: it stays counted.
    } else user.busy++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const entry = this.#users.get(userId)!;
      const next = entry.waiting.shift();
      if (next) return next();
      entry.busy--;
      if (entry.busy === 0) this.#users.delete(userId);
    };
  }

  /** Users with a call in flight or waiting (for tests). */
  get users(): number {
    return this.#users.size;
  }
}
