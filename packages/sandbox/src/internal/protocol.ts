/**
 * A task sent to a thread. A task sent ahead, while the thread still runs another (`ahead`), runs
 * only if the thread takes its ticket out of `ahead.slot` first: the pool may take it back by
 * taking the ticket itself.
 */
export interface TaskMessage {
  input: unknown;
  ahead?: { slot: Int32Array; ticket: number };
}

/** What a thread answers: the task's value, or the error the task threw, as plain data. */
export type ReplyMessage =
  | { ready: true }
  | { ok: true; value: unknown }
  | { ok: false; taken: true }
  | { ok: false; error: { name: string; message: string; fields: Record<string, unknown> } };
