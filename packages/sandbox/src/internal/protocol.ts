/** A task sent to a thread. */
export interface TaskMessage {
  input: unknown;
}

/** What a thread answers: the task's value, or the error the task threw, as plain data. */
export type ReplyMessage =
  | { ok: true; value: unknown }
  | { ok: false; error: { name: string; message: string; fields: Record<string, unknown> } };
