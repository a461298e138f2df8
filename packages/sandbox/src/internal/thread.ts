import { parentPort, type Transferable } from 'node:worker_threads';
import type { ReplyMessage, TaskMessage } from './protocol.ts';

/** Own enumerable fields of an error that survive structured cloning (code, limit, …). */
function fieldsOf(err: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return fields;
}

/**
 * The thread side of a SandboxPool: answers each task, one at a time in the order they came, with
 * `handler`'s value, or with the error it threw (name, message and its plain fields, rebuilt as a
 * TaskError in the pool's thread). A task sent ahead that the pool took back is answered `taken`.
 * It says `ready` first, once the thread's code is loaded.
 */
export function serveTasks<In, Out>(
  handler: (input: In) => Out | Promise<Out>,
  transferOf: (value: Out) => Transferable[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks must run in a worker thread');
  const answer = async ({ input, ahead }: TaskMessage): Promise<void> => {
    if (ahead && Atomics.compareExchange(ahead.slot, 0, ahead.ticket, 0) !== ahead.ticket) {
      port.postMessage({ ok: false, taken: true } satisfies ReplyMessage);
      return;
    }
    let reply: ReplyMessage;
    let transfer: Transferable[] = [];
    try {
      const value = await handler(input as In);
      reply = { ok: true, value };
      transfer = transferOf(value);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, error: { name: error.name, message: error.message, fields: fieldsOf(error) } };
    }
    port.postMessage(reply, transfer);
  };
  let answered = Promise.resolve();
  port.on('message', (message: TaskMessage) => {
    answered = answered.then(() => answer(message));
  });
  // Its code is loaded: the pool knows the next task starts at once.
  port.postMessage({ ready: true } satisfies ReplyMessage);
}
