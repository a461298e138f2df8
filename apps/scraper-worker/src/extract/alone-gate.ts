/**
 * Lets extractions run side by side, or one alone: an alone one waits for those running to end,
 * and holds new ones back until it ends. A worker that dies during an alone extraction died on
 * that page (docs/api.md §16a).
 */
export class AloneGate {
  #running = 0;
  #alone = false;
  #waitingAlone = 0;
  #waiters: (() => void)[] = [];

  /** Enters beside other extractions (after any alone one); returns the exit. */
  async enter(): Promise<() => void> {
    while (this.#alone || this.#waitingAlone > 0) await this.#turn();
    this.#running++;
    return () => {
      this.#running--;
      this.#wakeAll();
    };
  }

  /** Enters alone once nothing else runs; returns the exit. */
  async enterAlone(): Promise<() => void> {
    this.#waitingAlone++;
    try {
      while (this.#alone || this.#running > 0) await this.#turn();
    } finally {
      this.#waitingAlone--;
    }
    this.#alone = true;
    return () => {
      this.#alone = false;
      this.#wakeAll();
    };
  }

  #turn(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #wakeAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
