import type { Writable } from 'node:stream';

const WIDTH = 24;
const REDRAW_MS = 100;

/** 1536 → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A one-line progress bar on standard error, redrawn in place (at most every 100 ms); a bar when
 * the total is known, a count otherwise. Draws nothing when disabled.
 */
export class ProgressBar {
  readonly #out: Writable;
  readonly #enabled: boolean;
  readonly #label: string;
  #lastDraw = 0;
  #lastLength = 0;

  constructor(out: Writable, label: string, enabled: boolean) {
    this.#out = out;
    this.#label = label;
    this.#enabled = enabled;
  }

  /** Shows `done` of `total` (null: unknown), with `text` after the bar. */
  update(done: number, total: number | null, text: string, force = false): void {
    if (!this.#enabled) return;
    const now = Date.now();
    if (!force && now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    let bar = '';
    if (total !== null && total > 0) {
      const ratio = Math.min(1, done / total);
      const filled = Math.round(ratio * WIDTH);
      bar = ` [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}%`;
    }
    const line = `${this.#label}${bar} ${text}`;
    this.#out.write(`\r${line.padEnd(this.#lastLength)}`);
    this.#lastLength = line.length;
  }

  /** Draws the final state and ends the line. */
  finish(done: number, total: number | null, text: string): void {
    if (!this.#enabled) return;
    this.update(done, total, text, true);
    this.#out.write('\n');
  }
}
