import { Readable } from 'node:stream';
import type { Row } from './columns.ts';
import type { Encoder } from './encoder.ts';

/** Records in batches, from a database cursor or (in tests) an array. */
export interface RowSource {
  /** The next batch of at most `max` records; empty when there are no more. */
  next(max: number): Promise<Row[]>;
  /** Frees what the source holds; called once the stream ends or is destroyed, whichever first. */
  close(err?: Error | null): Promise<void>;
}

// A batch is sized to about this much text, so wide records never pile up in memory.
const TARGET_BATCH_BYTES = 256 * 1024;
const MIN_BATCH = 16;
const MAX_BATCH = 1000;

/**
 * The encoded records as a byte stream that pulls a batch only when the consumer wants more
 * (backpressure down to the database); destroying it (a client that went away) closes the source.
 * `minBatch` 1 suits rows that may each be megabytes (documents).
 */
export function encodeStream(source: RowSource, encoder: Encoder, minBatch = MIN_BATCH): Readable {
  // Rows that may be large start one at a time, until their size is known.
  let batch = minBatch < MIN_BATCH ? minBatch : 200;
  let started = false;
  let closed: Promise<void> | undefined;
  const close = (err?: Error | null) => {
    closed ??= source.close(err);
    return closed;
  };
  return new Readable({
    highWaterMark: 256 * 1024,
    async read() {
      try {
        let text = started ? '' : encoder.head();
        started = true;
        const rows = await source.next(batch);
        if (rows.length === 0) {
          await close();
          this.push(text + encoder.tail());
          this.push(null);
          return;
        }
        const body = encoder.rows(rows);
        // Aim the next batch at the target size, from the size of this one.
        const perRow = Math.max(1, body.length / rows.length);
        batch = Math.min(MAX_BATCH, Math.max(minBatch, Math.floor(TARGET_BATCH_BYTES / perRow)));
        text += body;
        this.push(text);
      } catch (err) {
        this.destroy(err as Error);
      }
    },
    destroy(err, callback) {
      close(err).then(
        () => callback(err),
        (closeErr: Error) => callback(err ?? closeErr),
      );
    },
  });
}

/** A source over records already in memory (tests, empty downloads). */
export function arraySource(rows: readonly Row[]): RowSource {
  let at = 0;
  return {
    async next(max) {
      const out = rows.slice(at, at + max);
      at += out.length;
      return out;
    },
    async close() {},
  };
}
